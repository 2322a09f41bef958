"""`gpu-advisor prices sync` on recorded gpuhunt catalogs served from 127.0.0.1: diff, apply, gone, admin, failures."""

from __future__ import annotations

import asyncio
import io
import json
import shutil
import threading
import zipfile
from collections.abc import Iterator
from datetime import date, timedelta
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import msgspec
import pytest
from click.testing import CliRunner
from sqlalchemy import select

from api.adapters import gpuhunt as price_feed
from api.adapters.storage.bootstrap import migrate_and_seed
from api.adapters.storage.catalog_repository import load_catalog
from api.adapters.storage.database import create_engine, create_session_factory
from api.adapters.storage.offer_repository import write_offers
from api.adapters.storage.reference import load_reference_catalog
from api.adapters.storage.tables import OfferPriceHistoryRow, OfferRow
from api.cli import main
from domain.catalog import Catalog
from domain.pricing.feed import FEED_PROVIDERS, ONLINE_FEED_PROVIDERS

pytestmark = pytest.mark.integration
FIXTURES = Path(__file__).parent.parent / "fixtures" / "gpuhunt"
SERVED = ["aws", "azure", "gcp", "lambdalabs", "nebius", "oci", "runpod", "verda"]
# gpuhunt's live providers the catalog has a provider for are read from their recorded answers; the others fail as
# "not in the catalog".
ONLINE = [p for p in ONLINE_FEED_PROVIDERS if load_reference_catalog().provider(FEED_PROVIDERS[p]) is not None]
NOT_IN_CATALOG = set(ONLINE_FEED_PROVIDERS) - set(ONLINE)


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *_: Any) -> None:
        pass


def publish(root: Path, provider: str, csv_text: str, version: str) -> None:
    """Lay out one provider's catalog as gpuhunt reads it."""
    folder = root / provider / version
    folder.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(f"{provider}.csv", csv_text)
    (folder / "catalog.zip").write_bytes(buffer.getvalue())
    (root / provider / "version").write_text(version)


def recorded_online(provider: str) -> tuple[list[Any], str]:
    """A live provider's answer as recorded in its fixture (its API cannot be reached from a test)."""
    from gpuhunt._internal import storage

    text = (FIXTURES / f"{provider}.csv").read_text()
    return list(storage.load(io.StringIO(text), provider=provider)), "live 20261203-1200"


@pytest.fixture
def catalogs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The recorded catalogs on a loopback HTTP server; GPUHUNT_CATALOG_URL points gpuhunt at it."""
    root = tmp_path / "catalogs"
    for provider in SERVED:
        publish(root, provider, (FIXTURES / f"{provider}.csv").read_text(), "20261130-1")
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setattr(price_feed, "online_items", recorded_online)
    try:
        yield root
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def database(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    asyncio.run(migrate_and_seed(postgres_url))
    monkeypatch.setenv("DATABASE_URL", postgres_url)
    monkeypatch.delenv("REDIS_URL", raising=False)
    return postgres_url


def run_sync(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["prices", "sync", "--json", *args])
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


async def stored(url: str) -> tuple[Catalog, list[OfferPriceHistoryRow], list[OfferRow]]:
    engine = create_engine(url)
    try:
        async with create_session_factory(engine)() as session:
            catalog = await load_catalog(session)
            history = list((await session.scalars(select(OfferPriceHistoryRow))).all())
            rows = list((await session.scalars(select(OfferRow).where(OfferRow.feed.is_not(None)))).all())
            assert catalog is not None
            return catalog, history, rows
    finally:
        await engine.dispose()


H200 = "runpod-h200-x1-community-on-demand"
RTX_4090 = "runpod-rtx-4090-x1-community-on-demand"


def by_provider(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["provider"]: entry for entry in document["providers"]}


def test_dry_run_shows_the_diff_for_every_provider_and_writes_nothing(catalogs: Path, database: str) -> None:
    before, history_before, _ = asyncio.run(stored(database))
    document = run_sync("--dry-run")
    providers = by_provider(document)
    assert set(providers) == {"aws", "azure", "gcp", "lambda", "nebius", "oracle", "runpod", "verda"} | {
        FEED_PROVIDERS[p] for p in ONLINE
    }
    assert all(entry["added"] for entry in providers.values())
    assert document["applied"] is False and document["catalog_url"].startswith("http://127.0.0.1:")
    failed = {f["provider"]: f["error"] for f in document["failed"]}
    assert set(failed) == {"cloudrift"} | NOT_IN_CATALOG
    assert all("not in the catalog" in failed[p] for p in NOT_IN_CATALOG)
    # p5.48xlarge: 55.04 for 8 GPUs, the cheaper of two regions; its spot price is its own offer.
    aws = {o["id"]: o for o in providers["aws"]["added"]}
    assert aws["aws-h100-sxm-x8-on-demand"]["usd_per_gpu_hour"] == pytest.approx(6.88)
    assert aws["aws-h100-sxm-x8-spot"]["pricing"] == "spot"
    assert "A10G" in providers["aws"]["unmapped_gpus"]
    # RunPod's PCIe H100 under its own id and tier; GCP's calendar-mode H200 is a reservation, not on demand.
    runpod = {o["id"]: o for o in providers["runpod"]["added"]}
    assert runpod["runpod-h100-pcie-x1-community-on-demand"]["usd_per_gpu_hour"] == 1.99
    assert runpod["runpod-h100-sxm-x1-secure-on-demand"]["tier"] == "secure"
    gcp = {o["gpu"]: o for o in providers["gcp"]["added"]}
    assert gcp["h200"]["pricing"] == "capacity_block"
    # Every curated Lambda offer of the same GPU, pricing, tier and size as a feed offer is superseded by it.
    feed = {(o["gpu"], o["pricing"], o["tier"], o["gpus_per_instance"]): o["id"] for o in providers["lambda"]["added"]}
    curated = {o.id: (o.gpu, o.pricing, o.tier, o.gpus_per_instance) for o in before.offers if o.provider == "lambda"}
    superseded = {o["id"]: o["by"] for o in providers["lambda"]["superseded"]}
    assert superseded == {offer_id: feed[key] for offer_id, key in curated.items() if key in feed}
    assert superseded["lambda-h100-sxm-on-demand"] == "lambda-h100-sxm-x1-on-demand"
    after, history_after, feed_rows = asyncio.run(stored(database))
    assert after.version == before.version and len(history_after) == len(history_before) and not feed_rows


def test_sync_applies_with_history_then_changes_and_gone(catalogs: Path, database: str) -> None:
    first = run_sync()
    assert first["applied"] is True
    catalog, history, rows = asyncio.run(stored(database))
    added = sum(len(entry["added"]) for entry in first["providers"])
    assert len(rows) == added and all(row.feed == "gpuhunt" and row.last_seen_at for row in rows)
    assert sum(1 for h in history if h.actor == "feed:gpuhunt" and h.change == "created") == added
    nebius = catalog.provider("nebius")
    assert nebius is not None and nebius.feed == "gpuhunt" and nebius.last_synced_at is not None
    assert any(o.id == H200 and o.usd_per_gpu_hour == 3.59 and o.tier == "community" for o in catalog.offers)
    # A feed offer supersedes the curated offer of the same provider, GPU, pricing, tier and size: one remains.
    lambda_offers = [o for o in catalog.offers if o.provider == "lambda"]
    assert len({o.identity for o in lambda_offers}) == len(lambda_offers)
    assert "lambda-h100-sxm-on-demand" not in {o.id for o in lambda_offers}
    superseded = [h for h in history if h.change == "superseded" and h.offer_id == "lambda-h100-sxm-on-demand"]
    assert [(h.actor, h.superseded_by) for h in superseded] == [("feed:gpuhunt", "lambda-h100-sxm-x1-on-demand")]

    # The next catalog: RunPod's H200 is cheaper and its RTX 4090 is gone; Lambda cannot be reached.
    runpod = (FIXTURES / "runpod.csv").read_text().replace(",3.59,", ",3.19,")
    runpod = "\n".join(line for line in runpod.splitlines() if "RTX 4090" not in line) + "\n"
    publish(catalogs, "runpod", runpod, "20261201-1")
    shutil.rmtree(catalogs / "lambdalabs")
    second = run_sync()
    providers = by_provider(second)
    assert providers["runpod"]["changed"] == [
        {"id": H200, "gpu": "h200", "gpus_per_instance": 1, "pricing": "on_demand", "tier": "community",
         "usd_per_gpu_hour": 3.19, "old_usd_per_gpu_hour": 3.59}
    ]  # fmt: skip
    assert [o["id"] for o in providers["runpod"]["gone"]] == [RTX_4090]
    assert "lambda" not in providers
    assert {f["provider"] for f in second["failed"]} == {"cloudrift", "lambdalabs"} | NOT_IN_CATALOG
    catalog, history, _ = asyncio.run(stored(database))
    ids = {o.id for o in catalog.offers}
    assert RTX_4090 not in ids  # gone: kept in history, no longer served
    assert "lambda-h100-sxm-x1-on-demand" in ids  # a provider that failed changes nothing of its own
    changes = [(h.offer_id, h.change) for h in history if h.offer_id in (RTX_4090, H200)]
    assert (RTX_4090, "gone") in changes and (H200, "updated") in changes


def test_an_administrators_newer_price_is_not_overwritten(catalogs: Path, database: str) -> None:
    run_sync("--provider", "verda")
    catalog, _, _ = asyncio.run(stored(database))
    offer = next(o for o in catalog.offers if o.id == "verda-h100-sxm-x1-on-demand")
    negotiated = msgspec.structs.replace(offer, usd_per_gpu_hour=1.5, as_of=date.today() + timedelta(days=1))

    async def administer() -> None:
        engine = create_engine(database)
        try:
            async with create_session_factory(engine)() as session, session.begin():
                await write_offers(session, [negotiated], [], actor="api-key-1")
        finally:
            await engine.dispose()

    asyncio.run(administer())
    document = run_sync("--provider", "verda")
    verda = by_provider(document)["verda"]
    assert [o["id"] for o in verda["kept"]] == ["verda-h100-sxm-x1-on-demand"] and not verda["changed"]
    catalog, _, _ = asyncio.run(stored(database))
    assert next(o for o in catalog.offers if o.id == "verda-h100-sxm-x1-on-demand").usd_per_gpu_hour == 1.5


def unreachable(provider: str) -> tuple[list[Any], str]:
    raise ConnectionRefusedError(f"{provider}: connection refused")


def test_no_provider_reachable_changes_nothing_and_fails(database: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", "http://127.0.0.1:9")  # nothing listens on the discard port
    monkeypatch.setattr(price_feed, "online_items", unreachable)
    result = CliRunner().invoke(main, ["prices", "sync", "--json"])
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert not document["providers"] and len(document["failed"]) == 18
    assert document["applied"] is False and document["catalog_url"] == "http://127.0.0.1:9"


async def test_providers_and_metrics_show_the_last_sync(catalogs: Path, database: str) -> None:
    from litestar.testing import AsyncTestClient

    from api.app import create_app
    from api.settings import Settings

    await asyncio.to_thread(run_sync, "--provider", "gcp")
    async with AsyncTestClient(app=create_app(Settings(database_url=database, rate_limit_per_minute=0))) as client:
        providers = {p["id"]: p for p in (await client.get("/v1/providers")).json()["items"]}
        assert providers["gcp"]["feed"] == "gpuhunt" and providers["gcp"]["last_synced_at"]
        assert providers["digitalocean"]["feed"] is None and providers["digitalocean"]["last_synced_at"] is None
        metrics = (await client.get("/metrics")).text
        assert 'gpu_advisor_price_feed_last_sync_timestamp_seconds{feed="gpuhunt",provider="gcp"}' in metrics


async def test_the_history_of_a_superseded_offer_names_the_feed_offer(catalogs: Path, database: str) -> None:
    from litestar.testing import AsyncTestClient

    from api.app import create_app
    from api.settings import Settings

    await asyncio.to_thread(run_sync, "--provider", "lambdalabs")
    async with AsyncTestClient(app=create_app(Settings(database_url=database, rate_limit_per_minute=0))) as client:
        history = (await client.get("/v1/offers/lambda-h100-sxm-on-demand/history")).json()["items"]
        assert history[0]["change"] == "superseded" and history[0]["actor"] == "feed:gpuhunt"
        assert history[0]["superseded_by"] == "lambda-h100-sxm-x1-on-demand"
        offers = (await client.get("/v1/offers", params={"provider": "lambda", "limit": 200})).json()["items"]
        identities = [(o["gpu"], o["pricing"], o["tier"], o["gpus_per_instance"]) for o in offers]
        assert len(identities) == len(set(identities))
