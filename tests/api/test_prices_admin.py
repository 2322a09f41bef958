"""Price administration through the in-process app: keys, PUT/DELETE, all-or-nothing imports, history, ages."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from api.adapters.storage.bootstrap import migrate_and_seed
from api.app import create_app
from api.services.offer_import import CSV_COLUMNS
from api.settings import Settings
from tests.conftest import sqlite_url

KEY = "admin-key-for-tests"
HEADERS = {"X-API-Key": KEY}
Client = AsyncTestClient[Litestar]
OFFER_ID = "digitalocean-h100-sxm-on-demand"


@pytest.fixture
async def admin(tmp_path: Path) -> AsyncIterator[Client]:
    """An app on a database of this test's own, with one admin key (and one the client does not use)."""
    url = sqlite_url(tmp_path)
    await migrate_and_seed(url)
    settings = Settings(database_url=url, api_keys=("another-key", KEY))
    async with AsyncTestClient(app=create_app(settings)) as client:
        yield client


async def offer(client: Client, offer_id: str = OFFER_ID) -> dict[str, Any]:
    body = (await client.get("/v1/offers", params={"limit": 200})).json()
    return next(item for item in body["items"] if item["id"] == offer_id)


async def version(client: Client) -> str:
    return str((await client.get("/health/ready")).json()["catalog_version"])


@pytest.mark.parametrize("headers", [{}, {"X-API-Key": "wrong"}, {"X-API-Key": ""}, {"x-api-key": KEY[:-1]}])
async def test_writes_without_the_right_key_are_401_and_change_nothing(admin: Client, headers: dict[str, str]) -> None:
    before, catalog = await offer(admin), await version(admin)
    changed = before | {"usd_per_gpu_hour": 0.01}
    responses = [
        await admin.put(f"/v1/admin/offers/{OFFER_ID}", json=changed, headers=headers),
        await admin.delete(f"/v1/admin/offers/{OFFER_ID}", headers=headers),
        await admin.post("/v1/admin/offers:bulk", json={"offers": [changed]}, headers=headers),
    ]
    assert [r.status_code for r in responses] == [401, 401, 401]
    assert all(r.headers["content-type"].startswith("application/problem+json") for r in responses)
    assert KEY not in " ".join(r.text for r in responses)
    assert await offer(admin) == before and await version(admin) == catalog


async def test_no_configured_key_refuses_every_write(seeded_sqlite_url: str) -> None:
    async with AsyncTestClient(app=create_app(Settings(database_url=seeded_sqlite_url))) as client:
        response = await client.delete(f"/v1/admin/offers/{OFFER_ID}", headers=HEADERS)
    assert response.status_code == 401 and "no API key is configured" in response.json()["detail"]


async def test_put_accepts_what_get_returns_and_keeps_history(admin: Client) -> None:
    before, catalog = await offer(admin), await version(admin)
    assert before["age_days"] >= 0
    cheaper = before | {"usd_per_gpu_hour": 2.49, "as_of": "2026-11-20", "source": "checked on the provider's page"}
    response = await admin.put(f"/v1/admin/offers/{OFFER_ID}", json=cheaper, headers=HEADERS)
    assert response.status_code == 200, response.text
    assert response.json()["usd_per_gpu_hour"] == 2.49
    assert await version(admin) != catalog
    assert (await offer(admin))["usd_per_gpu_hour"] == 2.49
    history = (await admin.get(f"/v1/offers/{OFFER_ID}/history")).json()["items"]
    assert [(h["change"], h["previous_usd_per_gpu_hour"], h["usd_per_gpu_hour"]) for h in history] == [
        ("updated", before["usd_per_gpu_hour"], 2.49),
        ("created", None, before["usd_per_gpu_hour"]),
    ]
    assert history[0]["actor"] == "api-key-2" and history[0]["as_of"] == "2026-11-20"


async def test_put_creates_a_new_offer_and_recommendations_use_it(admin: Client) -> None:
    new = {
        "provider": "lambda",
        "gpu": "H200",
        "gpus_per_instance": 8,
        "pricing": "on_demand",
        "usd_per_gpu_hour": 0.5,
        "as_of": "2026-11-28",
        "source": "negotiated quote",
    }
    response = await admin.put("/v1/admin/offers/lambda-h200-on-demand-x8", json=new, headers=HEADERS)
    assert response.status_code == 201 and response.json()["gpu"] == "h200"
    body = {"workload": {"kind": "inference", "model": "llama-3.1-70b"}, "constraints": {"gpus": ["h200"]}}
    recommendation = (await admin.post("/v1/recommendations", json=body)).json()
    assert recommendation["options"][0]["offer"]["offer_id"] == "lambda-h200-on-demand-x8"


async def test_unchanged_put_does_not_change_the_version(admin: Client) -> None:
    before, catalog = await offer(admin), await version(admin)
    response = await admin.put(f"/v1/admin/offers/{OFFER_ID}", json=before, headers=HEADERS)
    assert response.status_code == 200 and await version(admin) == catalog


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"gpu": "h900"}, "gpu"),
        ({"provider": "nobody"}, "provider"),
        ({"usd_per_gpu_hour": -1}, "usd_per_gpu_hour"),
        ({"usd_per_gpu_hour": "3.39"}, "usd_per_gpu_hour"),
        ({"bare_metal": 0}, "bare_metal"),
        ({"pricing": "free"}, "pricing"),
        ({"as_of": "yesterday"}, "as_of"),
        ({"source": ""}, "source"),
        ({"colour": "blue"}, "colour"),
    ],
)
async def test_put_rejects_bad_offers_and_changes_nothing(admin: Client, change: dict[str, Any], field: str) -> None:
    before, catalog = await offer(admin), await version(admin)
    response = await admin.put(f"/v1/admin/offers/{OFFER_ID}", json=before | change, headers=HEADERS)
    assert response.status_code == 400, response.text
    assert field in [e["field"] for e in response.json()["errors"]]
    assert await offer(admin) == before and await version(admin) == catalog


async def test_delete_keeps_history(admin: Client) -> None:
    response = await admin.delete(f"/v1/admin/offers/{OFFER_ID}", headers=HEADERS)
    assert response.status_code == 204
    ids = [o["id"] for o in (await admin.get("/v1/offers", params={"limit": 200})).json()["items"]]
    assert OFFER_ID not in ids
    history = (await admin.get(f"/v1/offers/{OFFER_ID}/history")).json()["items"]
    assert history[0]["change"] == "deleted"
    again = await admin.delete(f"/v1/admin/offers/{OFFER_ID}", headers=HEADERS)
    assert again.status_code == 404
    assert (await admin.get("/v1/offers/never-was/history")).status_code == 404


def csv_document(rows: list[dict[str, Any]]) -> str:
    lines = [",".join(CSV_COLUMNS)]
    lines += [",".join(str(row.get(column, "")) for column in CSV_COLUMNS) for row in rows]
    return "\n".join(lines) + "\n"


async def test_csv_import_creates_and_updates(admin: Client) -> None:
    rows = [
        {"id": OFFER_ID, "provider": "digitalocean", "gpu": "h100-sxm", "pricing": "on_demand",
         "usd_per_gpu_hour": 2.79, "vcpus": 20, "ram_gb": 250, "as_of": "2026-11-25", "source": "provider page"},
        {"id": "vultr-h100-sxm-on-demand", "provider": "vultr", "gpu": "H100 SXM5", "gpus_per_instance": 8,
         "pricing": "on_demand", "usd_per_gpu_hour": 2.3, "bare_metal": "true", "as_of": "2026-11-25",
         "source": "provider page"},
    ]  # fmt: skip
    response = await admin.post(
        "/v1/admin/offers:bulk", content=csv_document(rows), headers=HEADERS | {"Content-Type": "text/csv"}
    )
    assert response.status_code == 200, response.text
    assert response.json()["created"] == ["vultr-h100-sxm-on-demand"] and response.json()["updated"] == [OFFER_ID]
    created = await offer(admin, "vultr-h100-sxm-on-demand")
    assert created["gpu"] == "h100-sxm" and created["bare_metal"] is True and created["gpus_per_instance"] == 8


async def test_a_bad_row_rejects_the_whole_file_naming_every_bad_row(admin: Client) -> None:
    before, catalog = await offer(admin), await version(admin)
    rows = [
        {"id": OFFER_ID, "provider": "digitalocean", "gpu": "h100-sxm", "pricing": "on_demand",
         "usd_per_gpu_hour": 1.11, "as_of": "2026-11-25", "source": "provider page"},
        {"id": "x-1", "provider": "digitalocean", "gpu": "h900", "pricing": "on_demand",
         "usd_per_gpu_hour": 1, "as_of": "2026-11-25", "source": "s"},
        {"id": "x-2", "provider": "digitalocean", "gpu": "h200", "pricing": "on_demand",
         "usd_per_gpu_hour": "cheap", "as_of": "2026-11-25", "source": "s"},
        {"id": "x-3", "provider": "digitalocean", "gpu": "h200", "pricing": "on_demand",
         "usd_per_gpu_hour": 1, "as_of": "2026-11-25", "source": ""},
    ]  # fmt: skip
    response = await admin.post(
        "/v1/admin/offers:bulk", content=csv_document(rows), headers=HEADERS | {"Content-Type": "text/csv"}
    )
    assert response.status_code == 400
    errors = [(e["line"], e["field"]) for e in response.json()["errors"]]
    assert errors == [(3, "gpu"), (4, "usd_per_gpu_hour"), (5, "source")]
    assert await offer(admin) == before and await version(admin) == catalog


@pytest.mark.parametrize(
    ("content", "content_type", "field"),
    [
        ("id,provider\nx,y\n", "text/csv", "gpu"),
        ("id,provider,gpu,pricing,usd_per_gpu_hour,as_of,source,colour\n", "text/csv", "colour"),
        ('{"offers": "none"}', "application/json", "offers"),
        ('{"offers": [1]}', "application/json", "row"),
        ("{not json", "application/json", "body"),
        # Found by the long contract run: a bare CR inside the header was a 500.
        ("id,pro\rvider,gpu\n", "text/csv", "pro"),
        # An unterminated quote swallowed the rest of the file into one cell and was reported as a missing value.
        ('id,provider,gpu,pricing,usd_per_gpu_hour,as_of,source\n"x,y\n', "text/csv", "body"),
        ("id,provider,gpu,pricing,usd_per_gpu_hour,as_of,source,gpu\n", "text/csv", "gpu"),
        ('{"offers": [], "dry_run": true}', "application/json", "dry_run"),
    ],
)
async def test_malformed_files_are_400(admin: Client, content: str, content_type: str, field: str) -> None:
    response = await admin.post(
        "/v1/admin/offers:bulk", content=content, headers=HEADERS | {"Content-Type": content_type}
    )
    assert response.status_code == 400 and field in [e["field"] for e in response.json()["errors"]]


async def test_json_import_and_wrong_media_type(admin: Client) -> None:
    current = await offer(admin)
    response = await admin.post(
        "/v1/admin/offers:bulk", json={"offers": [current | {"usd_per_gpu_hour": 3.09}]}, headers=HEADERS
    )
    assert response.status_code == 200 and response.json()["updated"] == [OFFER_ID]
    wrong = await admin.post("/v1/admin/offers:bulk", content="x", headers=HEADERS | {"Content-Type": "text/plain"})
    assert wrong.status_code == 415


async def test_offer_ages_and_max_age_filter(admin: Client) -> None:
    everything = (await admin.get("/v1/offers", params={"limit": 200})).json()["items"]
    # The youngest shipped price's age: some offers are that young, the older ones are left out.
    youngest = min(o["age_days"] for o in everything)
    recent = (await admin.get("/v1/offers", params={"limit": 200, "max_age_days": youngest})).json()["items"]
    assert recent and all(o["age_days"] <= youngest for o in recent)
    assert len(recent) == sum(1 for o in everything if o["age_days"] <= youngest) < len(everything)
