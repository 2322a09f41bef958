"""GET /v1/accuracy: the calibration ledger behind bands and confidence, out of sample."""

from __future__ import annotations

from litestar import Litestar
from litestar.testing import AsyncTestClient


async def test_the_ledger_reports_test_cross_validated_and_in_sample_figures(
    client: AsyncTestClient[Litestar],
) -> None:
    response = await client.get("/v1/accuracy")
    assert response.status_code == 200
    body = response.json()
    assert body["total"] == len(body["items"]) > 0
    assert body["points"] == sum(row["points"] + row["fit_points"] for row in body["items"]) >= 40
    assert {row["kind"] for row in body["items"]} == {"inference", "training", "fine_tuning", "image_generation"}
    assert {row["regime"] for row in body["items"] if row["kind"] == "inference"} <= {"le_64", "65_256", "gt_256"}
    for row in body["items"]:
        if row["points"]:
            assert 0 <= row["median_error_pct"] <= row["worst_error_pct"]
            assert 0 <= row["band_coverage_pct"] <= 100
        else:
            assert row["median_error_pct"] is None and row["band_coverage_pct"] is None
    totals = body["totals"]
    assert totals["points"] == sum(row["points"] for row in body["items"]) > 0
    assert totals["fit_points"] == sum(row["fit_points"] for row in body["items"])
    assert "test set" in body["method"] and "hash" in body["method"]


async def test_confidence_follows_the_out_of_sample_figures(client: AsyncTestClient[Litestar]) -> None:
    rows = [
        r
        for r in (await client.get("/v1/accuracy")).json()["items"]
        if (r["family"], r["kind"]) == ("hopper", "inference")
    ]
    body = {"workload": {"kind": "inference", "model": "llama-3.1-8b"}, "gpu": "h100-sxm", "gpu_count": 1}
    option = (await client.post("/v1/estimates", json=body)).json()
    out_of_sample = sum(row["points"] for row in rows) + sum(
        row["fit_points"] for row in rows if row["cv_median_error_pct"] is not None
    )
    assert out_of_sample >= 3
    assert option["confidence"] == "calibrated"
