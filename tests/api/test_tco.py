"""Buying against renting through the in-process app."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from api.openapi import examples

Client = AsyncTestClient[Litestar]
H100 = examples.TCO_REQUESTS["8x H100 bought vs rented for 3 years at 60% utilization"]


@pytest.mark.parametrize("summary", list(examples.TCO_REQUESTS))
async def test_documented_requests_compare_buying_and_renting(client: Client, summary: str) -> None:
    response = await client.post("/v1/tco", json=examples.TCO_REQUESTS[summary])
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["buy"]["total"] > 0 and body["buy"]["per_gpu_hour"] > 0
    assert len(body["buy"]["years"]) == body["years"]
    assert body["rent"] and all(option["total"] > 0 and option["years"] for option in body["rent"])
    assert body["cheaper"] in ("buy", "rent") and body["summary"]
    assert {"electricity_usd_per_kwh", "pue", "purchase_usd"} <= {a["name"] for a in body["assumptions"]}


async def test_cny_states_its_rate(client: Client) -> None:
    body = (await client.post("/v1/tco", json=H100 | {"currency": "CNY"})).json()
    assert body["currency"] == "CNY" and body["exchange_rate"]["usd_to_cny"] > 0


async def test_chinese_by_body_or_header(client: Client) -> None:
    by_body = (await client.post("/v1/tco", json=H100 | {"lang": "zh"})).json()
    by_header = (await client.post("/v1/tco", json=H100, headers={"Accept-Language": "zh-CN"})).json()
    assert by_body["lang"] == by_header["lang"] == "zh"
    assert by_body["summary"] == by_header["summary"] and "更划算" in by_body["summary"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"gpu": "h100-sxm", "system": "dgx-h100"}, "gpu"),
        ({"years": 3}, "gpu"),
        ({"gpu": "h100-sxm", "years": 0}, "years"),
        ({"gpu": "h100-sxm", "years": 7}, "years"),
        ({"gpu": "h100-sxm", "utilization": 0}, "utilization"),
        ({"gpu": "h100-sxm", "utilization": 1.5}, "utilization"),
        ({"gpu": "h100-sxm", "purchase_usd": -1}, "purchase_usd"),
        ({"gpu": "h100-sxm", "electricity_usd_per_kwh": -0.1}, "electricity_usd_per_kwh"),
        ({"gpu": "h100-sxm", "pricing": ["monthly"]}, "pricing"),
        ({"gpu": "h100-sxm", "unknown": 1}, "unknown"),
        ({"gpu": "l40s"}, "purchase_usd"),
        ({"gpu": "h100x"}, "gpu"),
    ],
)
async def test_bad_input_is_a_problem_document(client: Client, body: dict[str, Any], field: str) -> None:
    response = await client.post("/v1/tco", json=body)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    problem = response.json()
    assert problem["status"] == 400 and problem["detail"]
    assert any(field in error["field"] or field in error["message"] for error in problem["errors"]), problem


async def test_unknown_gpu_suggests_the_closest(client: Client) -> None:
    problem = (await client.post("/v1/tco", json={"gpu": "h100x"})).json()
    assert "h100-sxm" in problem["suggestions"]
