"""An offer's tier (community | secure | null) through every way offers come in and go out."""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from api.adapters.storage.bootstrap import migrate_and_seed
from api.app import create_app
from api.services.offer_import import CSV_COLUMNS, offers_csv
from api.settings import Settings
from domain.catalog import Offer
from tests.conftest import sqlite_url, with_offers

KEY = "admin-key-for-tests"
HEADERS = {"X-API-Key": KEY}
Client = AsyncTestClient[Litestar]
SECURE = {
    "provider": "runpod",
    "gpu": "h100-pcie",
    "pricing": "on_demand",
    "tier": "secure",
    "usd_per_gpu_hour": 2.89,
    "as_of": "2026-11-20",
    "source": "runpod.io/pricing, read 2026-11-20",
}


@pytest.fixture
async def admin(tmp_path: Path) -> AsyncIterator[Client]:
    url = sqlite_url(tmp_path)
    await migrate_and_seed(url)
    async with AsyncTestClient(app=create_app(Settings(database_url=url, api_keys=(KEY,)))) as client:
        yield client


async def listed(client: Client, offer_id: str) -> dict[str, Any]:
    body = (await client.get("/v1/offers", params={"provider": "runpod", "limit": 200})).json()
    return next(item for item in body["items"] if item["id"] == offer_id)


async def test_put_get_history_and_csv_keep_the_tier(admin: Client) -> None:
    response = await admin.put("/v1/admin/offers/runpod-h100-pcie-secure-test", json=SECURE, headers=HEADERS)
    assert response.status_code in (200, 201), response.text
    assert (await listed(admin, "runpod-h100-pcie-secure-test"))["tier"] == "secure"
    history = (await admin.get("/v1/offers/runpod-h100-pcie-secure-test/history")).json()["items"]
    assert [(h["change"], h["tier"]) for h in history] == [("created", "secure")]
    # CSV import: the tier column, empty for a provider with one tier.
    row = SECURE | {"id": "runpod-h100-pcie-community-test", "tier": "community", "usd_per_gpu_hour": "1.99"}
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, restval="")
    writer.writeheader()
    writer.writerow(row)
    body = out.getvalue()
    imported = await admin.post("/v1/admin/offers:bulk", content=body, headers=HEADERS | {"Content-Type": "text/csv"})
    assert imported.status_code == 200, imported.text
    # The import came within the reload interval of the write before it: served when the interval ends.
    await admin.app.state.services.sync.settled()
    assert (await listed(admin, "runpod-h100-pcie-community-test"))["tier"] == "community"


@pytest.mark.parametrize("tier", ["premium", "", 1])
async def test_an_unknown_tier_is_a_400_that_names_it(admin: Client, tier: Any) -> None:
    response = await admin.put("/v1/admin/offers/runpod-x", json=SECURE | {"tier": tier}, headers=HEADERS)
    assert response.status_code == 400 and "tier" in response.text
    assert response.headers["content-type"].startswith("application/problem+json")


def test_csv_export_round_trips_the_tier() -> None:
    offer = Offer(
        id="runpod-h100-pcie-secure",
        provider="runpod",
        gpu="h100-pcie",
        pricing="on_demand",
        tier="secure",
        usd_per_gpu_hour=2.89,
        as_of=date(2026, 11, 20),
        source="runpod.io/pricing",
    )
    rows = list(csv.DictReader(io.StringIO(offers_csv([offer]))))
    assert rows[0]["tier"] == "secure"


def test_the_cli_offer_table_shows_the_tier() -> None:
    from rich.console import Console

    from api.cli.catalog_tables import offers_view
    from api.schemas import OfferList
    from api.services.catalog_view import offer_read

    offer = Offer(
        id="runpod-h100-pcie-community",
        provider="runpod",
        gpu="h100-pcie",
        pricing="on_demand",
        tier="community",
        usd_per_gpu_hour=1.99,
        as_of=date(2026, 11, 20),
        source="runpod.io/pricing",
    )
    page = OfferList(items=[offer_read(offer, date(2026, 12, 3))], total=1, offset=0, limit=50)
    for lang, words in (("en", "On demand (Community)"), ("zh", "社区云")):
        console = Console(record=True, width=200)
        for part in offers_view(page, lang):
            console.print(part)
        assert words.casefold() in console.export_text().casefold()


def test_an_option_names_the_tier_of_the_offer_it_is_priced_with(reference: Any) -> None:
    from datetime import UTC, datetime

    import msgspec

    from domain.planning import RecommendationRequest, prepare, rank
    from domain.workloads.results import ExchangeRate

    cheapest = Offer(
        id="runpod-l40s-x1-community-on-demand",
        provider="runpod",
        gpu="l40s",
        pricing="on_demand",
        tier="community",
        usd_per_gpu_hour=0.01,
        as_of=date(2026, 12, 1),
        source="test offer",
    )
    catalog = with_offers(reference, [*reference.offers, cheapest])
    body = {
        "workload": {"kind": "inference", "model": "llama-3.1-8b", "concurrency": 8},
        "constraints": {"gpus": ["l40s"]},
    }
    request = msgspec.convert(body, RecommendationRequest)
    now = datetime(2026, 12, 3, tzinfo=UTC)
    rate = ExchangeRate(usd_to_cny=7.1, as_of=now.date(), source="test")
    answer = rank(catalog, prepare(catalog, request, "en"), now=now, rate=rate)
    offer = answer.options[0].offer
    assert offer is not None and offer.offer_id == cheapest.id and offer.tier == "community"
