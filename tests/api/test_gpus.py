"""GPU list, detail and comparison through the in-process app."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

Client = AsyncTestClient[Litestar]


async def get_json(client: Client, url: str, **kwargs: Any) -> Any:
    response = await client.get(url, **kwargs)
    assert response.status_code == 200, response.text
    return response.json()


async def test_list_gpus_pages_everything(client: Client) -> None:
    first = await get_json(client, "/v1/gpus?limit=20")
    second = await get_json(client, "/v1/gpus?limit=20&offset=20")
    assert first["total"] >= 35 and first["limit"] == 20 and len(first["items"]) == 20
    ids = [g["id"] for g in first["items"] + second["items"]]
    assert len(set(ids)) == len(ids)


async def test_gpu_detail_has_dense_figures_sources_and_price(client: Client) -> None:
    gpu = await get_json(client, "/v1/gpus/h200")
    assert gpu["tflops"]["bf16"] == 989 and gpu["tflops"]["fp8"] == 1979
    assert gpu["memory_gb"] == 141 and gpu["sources"]
    on_demand = gpu["lowest_price"]["on_demand"]
    assert on_demand["provider"] == "runpod" and on_demand["usd_per_gpu_hour"] == 3.59
    assert on_demand["as_of"] == "2026-09-25" and on_demand["source"]


@pytest.mark.parametrize("name", ["H100", "H100%20SXM5", "nvidia-h100", "h100-sxm"])
async def test_aliases_resolve_to_the_same_gpu(client: Client, name: str) -> None:
    assert (await get_json(client, f"/v1/gpus/{name}"))["id"] == "h100-sxm"


async def test_unknown_gpu_is_a_404_problem_with_suggestions(client: Client) -> None:
    response = await client.get("/v1/gpus/h100x")
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("application/problem+json")
    problem = response.json()
    assert problem["status"] == 404 and problem["suggestions"][0] == "h100-sxm"
    assert "Did you mean h100-sxm" in problem["detail"]


@pytest.mark.parametrize(
    ("query", "check"),
    [
        ("vendor=amd", lambda g: g["vendor"] == "amd"),
        ("min_memory_gb=141", lambda g: g["memory_gb"] >= 141),
        ("ecosystem=rocm", lambda g: g["ecosystem"] == "rocm"),
        ("supports=fp8", lambda g: g["tflops"]["fp8"] is not None),
        ("supports=fp4", lambda g: g["tflops"]["fp4"] is not None),
        ("supports=nvlink", lambda g: g["interconnect"]["kind"] in ("nvswitch", "nvlink", "nvlink_bridge")),
        ("segment=workstation", lambda g: g["segment"] == "workstation"),
    ],
)
async def test_filters(client: Client, query: str, check: Any) -> None:
    body = await get_json(client, f"/v1/gpus?{query}&limit=200")
    assert body["items"] and all(check(g) for g in body["items"])
    everything = await get_json(client, "/v1/gpus?limit=200")
    assert body["total"] == sum(1 for g in everything["items"] if check(g))


async def test_sort_by_memory_is_descending_by_default(client: Client) -> None:
    items = (await get_json(client, "/v1/gpus?sort=memory_gb&limit=200"))["items"]
    memory = [g["memory_gb"] for g in items]
    assert memory == sorted(memory, reverse=True)
    ascending = (await get_json(client, "/v1/gpus?sort=memory_gb&order=asc&limit=200"))["items"]
    assert [g["memory_gb"] for g in ascending] == sorted(memory)


async def test_sort_by_price_puts_unpriced_gpus_last(client: Client) -> None:
    items = (await get_json(client, "/v1/gpus?sort=price&limit=200"))["items"]
    prices = [g["lowest_price"]["on_demand"] and g["lowest_price"]["on_demand"]["usd_per_gpu_hour"] for g in items]
    priced = [p for p in prices if p is not None]
    assert priced == sorted(priced) and prices[: len(priced)] == priced


async def test_compare_gives_ratios_and_a_summary(client: Client) -> None:
    body = await get_json(client, "/v1/gpus/compare?ids=h100-sxm,H200,mi300x")
    assert body["baseline"] == "h100-sxm" and [g["id"] for g in body["items"]] == ["h100-sxm", "h200", "mi300x"]
    h200 = body["ratios"][1]
    assert h200["memory_gb"] == pytest.approx(1.762, abs=1e-3) and h200["bf16_tflops"] == 1.0
    assert body["lang"] == "en" and "Compared with" in body["summary"]


async def test_compare_answers_in_chinese(client: Client) -> None:
    by_param = await get_json(client, "/v1/gpus/compare?ids=h100-sxm,mi300x&lang=zh")
    by_header = await get_json(client, "/v1/gpus/compare?ids=h100-sxm,mi300x", headers={"Accept-Language": "zh-CN"})
    assert by_param["lang"] == by_header["lang"] == "zh"
    assert "显存" in by_param["summary"] and by_param["summary"] == by_header["summary"]


@pytest.mark.parametrize("ids", ["h100-sxm", ",,", "h100-sxm, ", "a,b,c,d,e,f,g,h,i"])
async def test_compare_needs_two_to_eight_names(client: Client, ids: str) -> None:
    response = await client.get("/v1/gpus/compare", params={"ids": ids})
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "ids"


async def test_compare_merges_names_of_the_same_gpu(client: Client) -> None:
    body = await get_json(client, "/v1/gpus/compare?ids=h100-sxm,H100,h200")
    assert [g["id"] for g in body["items"]] == ["h100-sxm", "h200"]


async def test_compare_with_unknown_gpu_is_404(client: Client) -> None:
    response = await client.get("/v1/gpus/compare?ids=h100-sxm,h900")
    assert response.status_code == 404 and response.json()["detail"].startswith("No GPU 'h900'")
