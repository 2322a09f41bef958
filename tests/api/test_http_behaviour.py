"""ETags, 304s, problem documents for bad input, health and metrics."""

from __future__ import annotations

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

Client = AsyncTestClient[Litestar]


async def test_etag_and_304(client: Client) -> None:
    first = await client.get("/v1/gpus/h100-sxm")
    etag = first.headers["etag"]
    assert "max-age" in first.headers["cache-control"]
    again = await client.get("/v1/gpus/h100-sxm", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == etag
    stale = await client.get("/v1/gpus/h100-sxm", headers={"If-None-Match": '"something-else"'})
    assert stale.status_code == 200 and stale.json() == first.json()


async def test_etag_differs_by_query_and_language(client: Client) -> None:
    amd = await client.get("/v1/gpus?vendor=amd")
    nvidia = await client.get("/v1/gpus?vendor=nvidia")
    assert amd.headers["etag"] != nvidia.headers["etag"]
    en = await client.get("/v1/gpus/compare?ids=h100-sxm,h200")
    zh = await client.get("/v1/gpus/compare?ids=h100-sxm,h200", headers={"Accept-Language": "zh"})
    assert en.headers["etag"] != zh.headers["etag"] and "Accept-Language" in zh.headers["vary"]


async def test_cached_body_equals_fresh_body(client: Client) -> None:
    first = await client.get("/v1/offers?sort=as_of&limit=7")
    second = await client.get("/v1/offers?sort=as_of&limit=7")
    assert first.content == second.content and first.json()["items"]


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/v1/gpus?junk=1", "junk"),
        ("/v1/gpus/h100-sxm?vendor=amd", "vendor"),
        ("/v1/offers?gpu=h100-sxm&limt=3", "limt"),
        ("/v1/gpus/compare?ids=h100-sxm,h200&x=", "x"),
        ("/v1/recommendations/r-unknown?junk=1", "junk"),
    ],
)
async def test_an_unknown_query_parameter_is_a_400_and_caches_nothing(client: Client, url: str, field: str) -> None:
    # Ignored parameters were part of the cache key: random ones filled the caches with copies of one answer.
    cache = client.app.state.services.cache
    entries = getattr(cache, "_entries", None) or cache.local._entries
    before = len(entries)
    for value in range(5):
        response = await client.get(f"{url}{value}")
        assert response.status_code == 400, response.text
        assert response.headers["content-type"].startswith("application/problem+json")
        assert [error["field"] for error in response.json()["errors"]] == [field]
    assert len(entries) == before


@pytest.mark.parametrize(
    ("url", "status"),
    [
        # U+001C is white space to Python's `\s`, not to ECMA-262's, the dialect the schema states.
        ("/v1/gpus/compare?ids=h100-sxm,%1C", 404),
        ("/v1/gpus/compare?ids=h100-sxm,%E2%80%83h200", 200),
        # Python's `$` matches before a final newline; ECMA's (and so the schema's) does not.
        ("/v1/model-history/abc%0A", 400),
        ("/v1/recommendations/rec_0123456789abcdef01234567%0A", 400),
        ("/v1/offers/some-offer%0A/history", 400),
    ],
)
async def test_patterns_mean_what_the_published_ecma_pattern_means(client: Client, url: str, status: int) -> None:
    response = await client.get(url)
    assert response.status_code == status, response.text


async def test_the_cache_key_names_the_read_parameters_in_a_fixed_order(client: Client) -> None:
    one = await client.get("/v1/offers?gpu=h100-sxm&limit=3")
    other = await client.get("/v1/offers?limit=3&gpu=h100-sxm")
    assert one.headers["etag"] == other.headers["etag"]


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/v1/gpus?vendor=amd&vendor=nvidia", "vendor"),
        ("/v1/gpus?vendor=nvidia&vendor=amd", "vendor"),
        ("/v1/offers?limit=3&gpu=h100-sxm&limit=4", "limit"),
        ("/v1/gpus/compare?ids=h100-sxm,h200&ids=mi300x,h200", "ids"),
        ("/v1/gpus/compare?ids=h100-sxm,h200&lang=en&lang=zh", "lang"),
    ],
)
async def test_a_repeated_single_value_parameter_is_a_400_not_a_cached_guess(
    client: Client, url: str, field: str
) -> None:
    # The cache key sorted repeated values while the handler read one of them: two orders shared one answer.
    amd_only = (await client.get("/v1/gpus?vendor=amd")).json()
    response = await client.get(url)
    assert response.status_code == 400, response.text
    assert [error["field"] for error in response.json()["errors"]] == [field]
    assert (await client.get("/v1/gpus?vendor=amd")).json() == amd_only


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/v1/gpus?min_memory_gb=-1", "min_memory_gb"),
        ("/v1/gpus?min_memory_gb=nan", "min_memory_gb"),
        ("/v1/gpus?min_memory_gb=1e308", "min_memory_gb"),
        ("/v1/gpus?vendor=apple", "vendor"),
        ("/v1/gpus?sort=speed", "sort"),
        ("/v1/gpus?limit=0", "limit"),
        ("/v1/gpus?limit=abc", "limit"),
        ("/v1/offers?pricing=free", "pricing"),
        ("/v1/offers?max_usd_per_gpu_hour=0", "max_usd_per_gpu_hour"),
        ("/v1/gpus/compare", "ids"),
    ],
)
async def test_bad_query_is_a_400_problem_naming_the_field(client: Client, url: str, field: str) -> None:
    response = await client.get(url)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    problem = response.json()
    assert problem["status"] == 400 and field in [error["field"] for error in problem["errors"]]


@pytest.mark.parametrize("value", ["' OR 1=1 --", "h100; DROP TABLE gpus", "🚀", "%00", "a" * 150])
async def test_hostile_strings_are_answered_without_server_errors(client: Client, value: str) -> None:
    for url in ("/v1/gpus/{}", "/v1/models/{}", "/v1/systems/{}"):
        response = await client.get(url.format(value))
        assert response.status_code == 404, (url, value, response.text)
        assert "Traceback" not in response.text and "SELECT" not in response.text
    response = await client.get("/v1/offers", params={"gpu": value})
    assert response.status_code == 404


async def test_unknown_route_and_wrong_method_are_problems(client: Client) -> None:
    missing = await client.get("/v1/nothing-here")
    assert missing.status_code == 404 and missing.headers["content-type"].startswith("application/problem+json")
    wrong = await client.post("/v1/gpus", json={})
    assert wrong.status_code == 405 and wrong.headers["content-type"].startswith("application/problem+json")


async def test_health(client: Client) -> None:
    assert (await client.get("/health/live")).json() == {"status": "ok"}
    ready = await client.get("/health/ready")
    body = ready.json()
    assert ready.status_code == 200 and body["database"] == "ok" and body["redis"] == "local"
    assert body["catalog_source"] == "database" and body["status"] == "ok"


async def test_metrics(client: Client) -> None:
    await client.get("/v1/gpus/h200")
    text = (await client.get("/metrics")).text
    assert "gpu_advisor_catalog_info{" in text
    assert "gpu_advisor_cache_lookups_total" in text
    assert "gpu_advisor_requests_total" in text
