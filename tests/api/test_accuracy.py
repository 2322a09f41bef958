"""GET /v1/accuracy: the calibration ledger behind bands and confidence."""

from __future__ import annotations

from litestar import Litestar
from litestar.testing import AsyncTestClient


async def test_the_ledger_lists_families_and_kinds(client: AsyncTestClient[Litestar]) -> None:
    response = await client.get("/v1/accuracy")
    assert response.status_code == 200
    body = response.json()
    assert body["total"] == len(body["items"]) > 0
    assert body["points"] == sum(row["points"] for row in body["items"]) >= 40
    kinds = {row["kind"] for row in body["items"]}
    assert kinds == {"inference", "training", "fine_tuning", "image_generation"}
    for row in body["items"]:
        assert 0 <= row["median_error_pct"] <= row["worst_error_pct"]
        assert 0 < row["band_coverage_pct"] <= 100


async def test_confidence_follows_the_ledger(client: AsyncTestClient[Litestar]) -> None:
    ledger = {(r["family"], r["kind"]): r for r in (await client.get("/v1/accuracy")).json()["items"]}
    body = {"workload": {"kind": "inference", "model": "llama-3.1-8b"}, "gpu": "h100-sxm", "gpu_count": 1}
    option = (await client.post("/v1/estimates", json=body)).json()
    row = ledger[("hopper", "inference")]
    calibrated = row["points"] >= 3 and row["median_error_pct"] <= 15
    assert option["confidence"] == ("calibrated" if calibrated else "spec_sheet")
