"""Recommendations and estimates through the in-process app."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from api.app import create_app
from api.openapi import examples
from api.services import recommendations as recommendations_service
from api.settings import Settings
from api.wiring import Services
from domain.planning import RecommendationRequest

Client = AsyncTestClient[Litestar]
LLAMA_70B = {"workload": {"kind": "inference", "model": "llama-3.1-70b", "concurrency": 32}}


async def post_json(client: Client, url: str, body: dict[str, Any], **kwargs: Any) -> Any:
    response = await client.post(url, json=body, **kwargs)
    assert response.status_code == 200, response.text
    return response.json()


@pytest.mark.parametrize("summary", list(examples.REQUESTS))
async def test_every_documented_request_gets_ranked_costed_explained_options(client: Client, summary: str) -> None:
    body = await post_json(client, "/v1/recommendations", examples.REQUESTS[summary])
    assert body["id"].startswith("rec_") and body["options"] and body["summary"]
    best = body["options"][0]
    assert best["rank"] == 1 and best["feasible"] and best["cost"]["hourly"] > 0
    assert best["assumptions"] and best["reasons"] and best["confidence"] in ("calibrated", "spec_sheet")
    assert 0 <= best["score"] <= 1
    assert all(e["reason"] and e["code"] for e in body["excluded"])


async def test_same_request_same_id_and_retrievable(client: Client) -> None:
    first = await client.post("/v1/recommendations", json=LLAMA_70B)
    second = await client.post("/v1/recommendations", json=LLAMA_70B)
    assert first.json()["id"] == second.json()["id"]
    assert first.headers["location"] == f"/v1/recommendations/{first.json()['id']}"
    stored = await client.get(first.headers["location"])
    assert stored.status_code == 200 and stored.json() == first.json()


async def test_fresh_cached_and_stored_answers_are_framed_alike(client: Client) -> None:
    body = {"workload": LLAMA_70B["workload"] | {"concurrency": 31}}
    fresh = await client.post("/v1/recommendations", json=body)
    cached = await client.post("/v1/recommendations", json=body)
    stored = await client.get(fresh.headers["location"])
    for answer in (fresh, cached, stored):
        assert answer.status_code == 200, answer.text
        assert answer.headers["content-type"] == "application/json"
        assert int(answer.headers["content-length"]) == len(answer.content) > 0
        assert answer.headers["x-content-type-options"] == "nosniff" and answer.headers["x-request-id"]
        assert answer.content == fresh.content
    assert cached.headers["location"] == fresh.headers["location"]
    assert "x-recommendation-stored" not in fresh.headers


async def test_defaults_are_part_of_the_id(client: Client) -> None:
    implicit = await post_json(client, "/v1/recommendations", LLAMA_70B)
    explicit = await post_json(
        client,
        "/v1/recommendations",
        {
            "workload": LLAMA_70B["workload"] | {"input_tokens": 1024, "output_tokens": 256, "precision": "bf16"},
            "constraints": {"pricing": ["on_demand"]},
            "objective": "balanced",
            "lang": "en",
        },
    )
    assert implicit["id"] == explicit["id"]
    assert implicit["workload"]["precision"] == "bf16" and implicit["workload"]["kv_cache_precision"] == "bf16"


async def test_chinese_by_body_or_header(client: Client) -> None:
    by_body = await post_json(client, "/v1/recommendations", LLAMA_70B | {"lang": "zh"})
    by_header = await post_json(client, "/v1/recommendations", LLAMA_70B, headers={"Accept-Language": "zh-CN"})
    assert by_body["id"] == by_header["id"] and by_body["lang"] == "zh"
    assert "首选" in by_body["summary"]
    english = await post_json(client, "/v1/recommendations", LLAMA_70B)
    assert english["id"] != by_body["id"]


async def test_cny_states_its_rate(client: Client) -> None:
    usd = await post_json(client, "/v1/recommendations", LLAMA_70B)
    cny = await post_json(client, "/v1/recommendations", LLAMA_70B | {"currency": "CNY"})
    rate = cny["exchange_rate"]["usd_to_cny"]
    assert usd["exchange_rate"] is None and rate > 0 and cny["exchange_rate"]["as_of"]
    usd_best, cny_best = usd["options"][0], cny["options"][0]
    assert cny_best["cost"]["currency"] == "CNY"
    assert cny_best["cost"]["hourly"] == pytest.approx(usd_best["cost"]["hourly"] * rate, abs=0.02)
    assert cny_best["offer"]["usd_per_gpu_hour"] == usd_best["offer"]["usd_per_gpu_hour"]


async def test_unknown_model_is_a_400_with_close_matches(client: Client) -> None:
    response = await client.post("/v1/recommendations", json={"workload": {"kind": "inference", "model": "llama-3-70"}})
    assert response.status_code == 400
    problem = response.json()
    assert problem["errors"][0]["field"] == "workload.model" and problem["suggestions"]


@pytest.mark.parametrize(
    "body",
    [
        {"workload": {"kind": "inference", "model": "llama-3.1-8b", "concurrency": -1}},
        {"workload": {"kind": "inference", "model": "llama-3.1-8b", "input_tokens": 1e308}},
        {"workload": {"kind": "inference", "model": "llama-3.1-8b", "colour": "blue"}},
        {"workload": {"kind": "teleport", "model": "llama-3.1-8b"}},
        {"workload": {"kind": "inference", "model": "llama-3.1-8b", "precision": "fp3"}},
        {"workload": {"kind": "inference"}},
        {"workload": {"kind": "inference", "model": "sdxl"}},
        {"workload": {"kind": "image_generation", "model": "llama-3.1-8b"}},
        {"workload": {"kind": "inference", "model": "llama-2-7b", "input_tokens": 8000}},
        {"workload": {"kind": "inference", "model": "llama-3.1-8b"}, "limit": 0},
        {"workload": {"kind": "inference", "model": "llama-3.1-8b"}, "constraints": {"gpus": ["h900"]}},
        {"workload": {"kind": "inference", "model": "llama-3.1-8b"}, "constraints": {"providers": ["nobody"]}},
        {"workload": {"kind": "training", "model": "llama-3.1-8b", "train_tokens": -5}},
        {"workload": {"kind": "fine_tuning", "model": "llama-3.1-8b", "method": "dora"}},
        {"workload": {"kind": "image_generation", "width": 1000.5}},
    ],
)
async def test_bad_bodies_are_400_problems(client: Client, body: dict[str, Any]) -> None:
    response = await client.post("/v1/recommendations", json=body)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["errors"]


async def test_not_json_is_a_400(client: Client) -> None:
    response = await client.post(
        "/v1/recommendations", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400


async def test_unknown_or_malformed_ids(client: Client) -> None:
    assert (await client.get("/v1/recommendations/rec_" + "0" * 24)).status_code == 404
    assert (await client.get("/v1/recommendations/not-an-id")).status_code == 400


async def test_constraints_shape_the_answer(client: Client) -> None:
    body = await post_json(
        client,
        "/v1/recommendations",
        LLAMA_70B | {"constraints": {"vendors": ["amd"], "single_node": True}, "objective": "cost"},
    )
    assert body["options"] and {o["gpu"]["vendor"] for o in body["options"]} == {"amd"}
    assert all(o["nodes"] == 1 for o in body["options"])
    codes = {e["gpu"]: e["code"] for e in body["excluded"]}
    assert codes["h100-sxm"] == "vendor_excluded"


async def test_budget_excludes_expensive_configurations(client: Client) -> None:
    body = await post_json(client, "/v1/recommendations", LLAMA_70B | {"constraints": {"max_usd_per_hour": 3}})
    assert all(o["cost"]["hourly"] <= 3 for o in body["options"])
    assert any(e["code"] == "over_budget" for e in body["excluded"])


async def test_stored_recommendation_survives_a_new_instance(seeded_sqlite_url: str, client: Client) -> None:
    created = await post_json(client, "/v1/recommendations", LLAMA_70B | {"objective": "speed"})
    async with AsyncTestClient(app=create_app(Settings(database_url=seeded_sqlite_url))) as other:
        response = await other.get(f"/v1/recommendations/{created['id']}")
    assert response.status_code == 200 and response.json()["options"] == created["options"]


@pytest.mark.parametrize("summary", list(examples.ESTIMATE_REQUESTS))
async def test_documented_estimates(client: Client, summary: str) -> None:
    option = await post_json(client, "/v1/estimates", examples.ESTIMATE_REQUESTS[summary])
    assert option["gpu_count"] == examples.ESTIMATE_REQUESTS[summary]["gpu_count"]


async def test_can_70b_run_on_one_h100(client: Client) -> None:
    body = {"workload": {"kind": "inference", "model": "llama-2-70b"}, "gpu": "H100", "gpu_count": 1}
    option = await post_json(client, "/v1/estimates", body)
    assert option["feasible"] is False and option["performance"] is None
    assert any("2 x NVIDIA H100" in reason for reason in option["reasons"])
    fits = await post_json(client, "/v1/estimates", body | {"gpu": "mi300x"})
    assert fits["feasible"] is True and fits["performance"]["tokens_per_second"]["expected"] > 0


async def test_estimate_without_fp8_support_is_infeasible_not_an_error(client: Client) -> None:
    body = {
        "workload": {"kind": "inference", "model": "llama-3.1-8b", "precision": "fp8"},
        "gpu": "a100-sxm-80gb",
        "gpu_count": 1,
    }
    option = await post_json(client, "/v1/estimates", body)
    assert option["feasible"] is False and "FP8" in option["reasons"][0]


async def test_estimate_prices_with_the_asked_provider(client: Client) -> None:
    body = {
        "workload": {"kind": "inference", "model": "llama-3.1-8b"},
        "gpu": "h100-sxm",
        "gpu_count": 8,
        "provider": "digitalocean",
    }
    option = await post_json(client, "/v1/estimates", body)
    assert option["offer"]["provider"] == "digitalocean" and option["offer"]["gpus_per_instance"] == 8
    assert option["cost"]["hourly"] == pytest.approx(35.28)


async def test_custom_model_is_sized_like_a_catalog_one(client: Client) -> None:
    custom = {
        "name": "in-house 13B",
        "params_b": 13.0,
        "layers": 40,
        "hidden_size": 5120,
        "attention_heads": 40,
        "attention": "mha",
        "max_context": 4096,
    }
    mine = await post_json(client, "/v1/recommendations", {"workload": {"kind": "inference", "custom_model": custom}})
    llama = await post_json(client, "/v1/recommendations", {"workload": {"kind": "inference", "model": "llama-2-13b"}})
    assert mine["requirements"]["weights_gb"] == llama["requirements"]["weights_gb"] == 26.0
    assert mine["requirements"]["kv_cache_gb_per_request"] == llama["requirements"]["kv_cache_gb_per_request"]
    assert mine["workload"]["model"] is None and mine["workload"]["custom_model"]["name"] == "in-house 13B"


async def test_model_and_custom_model_together_is_a_400(client: Client) -> None:
    custom = {"params_b": 7, "layers": 32, "hidden_size": 4096, "attention_heads": 32, "kv_heads": 8}
    body = {"workload": {"kind": "inference", "model": "llama-3.1-8b", "custom_model": custom}}
    response = await client.post("/v1/recommendations", json=body)
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "workload.model"


async def test_serving_options_carry_a_rent_or_buy_hint(client: Client) -> None:
    body = await post_json(
        client, "/v1/recommendations", {"workload": {"kind": "inference", "model": "deepseek-r1", "concurrency": 50}}
    )
    hinted = [o for o in body["options"] if o["tco"]]
    assert hinted, "no serving option has a TCO hint"
    for option in hinted:
        hint = option["tco"]
        assert hint["monthly_rent"] == pytest.approx(option["cost"]["monthly"], abs=0.02)
        assert hint["cheaper"] == ("buy" if hint["monthly_owned"] < hint["monthly_rent"] else "rent")
        assert hint["purchase_usd"] > 0 and "3 years" in hint["basis"]
    training = await post_json(client, "/v1/recommendations", examples.REQUESTS[list(examples.REQUESTS)[1]])
    assert all(o["tco"] is None for o in training["options"])


async def test_moe_custom_model_with_every_expert_active_is_a_400(client: Client) -> None:
    custom = {
        "params_b": 47,
        "active_params_b": 13,
        "layers": 32,
        "hidden_size": 4096,
        "attention_heads": 32,
        "kv_heads": 8,
        "routed_experts": 8,
        "experts_per_token": 8,
    }
    for url, extra in (("/v1/recommendations", {}), ("/v1/estimates", {"gpu": "h100", "gpu_count": 8})):
        response = await client.post(url, json={"workload": {"kind": "inference", "custom_model": custom}} | extra)
        assert response.status_code == 400, response.text


async def test_order_repetition_and_aliases_do_not_change_the_id(client: Client) -> None:
    first = await post_json(
        client,
        "/v1/recommendations",
        LLAMA_70B | {"constraints": {"gpus": ["H100", "h200"], "vendors": ["nvidia", "amd"], "pricing": ["on_demand"]}},
    )
    second = await post_json(
        client,
        "/v1/recommendations",
        LLAMA_70B
        | {
            "constraints": {
                "gpus": ["h200", "h100-sxm", "h200"],
                "vendors": ["amd", "nvidia"],
                "pricing": ["on_demand", "on_demand"],
            }
        },
    )
    assert first["id"] == second["id"] and first["constraints"]["gpus"] == ["h100-sxm", "h200"]


@pytest.mark.parametrize(
    ("method", "url", "body"),
    [
        ("GET", "/v1/nothing", None),
        ("POST", "/v1/gpus", {}),
        ("POST", "/v1/recommendations", "{broken"),
        ("GET", "/v1/gpus?limit=0", None),
        ("GET", "/v1/gpus/h900", None),
    ],
)
async def test_every_error_is_a_complete_problem(client: Client, method: str, url: str, body: Any) -> None:
    if isinstance(body, str):
        response = await client.request(method, url, content=body, headers={"Content-Type": "application/json"})
    else:
        response = await client.request(method, url, json=body)
    problem = response.json()
    assert response.status_code >= 400 and {"type", "title", "status", "detail"} <= problem.keys()
    if response.status_code == 400:
        assert problem["errors"]


async def test_the_same_request_arriving_while_it_is_computed_is_computed_and_stored_once(
    private_sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new catalog snapshot makes every repeated request a miss at once: the ones that arrive while the first is
    computed and stored get its answer instead of computing and storing it again."""
    ranked: list[object] = []
    real = recommendations_service.rank

    def counted(*args: Any, **kwargs: Any) -> Any:
        ranked.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(recommendations_service, "rank", counted)
    request = msgspec.convert(
        {"workload": {"kind": "inference", "model": "llama-3.1-8b", "concurrency": 77}}, RecommendationRequest
    )
    services = await Services.start(Settings(database_url=private_sqlite_url))
    try:
        now = datetime.now(UTC)
        answers = await asyncio.gather(
            *(recommendations_service.create_recommendation(services, request, "en", now) for _ in range(6))
        )
    finally:
        await services.close()
    assert len({(answer.id, answer.body) for answer in answers}) == 1
    assert len(ranked) == 1


async def test_requests_that_waited_for_a_computation_that_failed_compute_it_themselves(
    private_sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = recommendations_service.rank
    calls: list[int] = []

    def failing_once(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("the first computation fails")
        return real(*args, **kwargs)

    monkeypatch.setattr(recommendations_service, "rank", failing_once)
    request = msgspec.convert({"workload": {"kind": "inference", "model": "llama-3.1-8b"}}, RecommendationRequest)
    services = await Services.start(Settings(database_url=private_sqlite_url))
    try:
        now = datetime.now(UTC)
        answers = await asyncio.gather(
            *(recommendations_service.create_recommendation(services, request, "en", now) for _ in range(4)),
            return_exceptions=True,
        )
    finally:
        await services.close()
    assert [type(answer).__name__ for answer in answers].count("RuntimeError") == 1
    assert len(calls) == 2  # the others waited again, for the one of them that computed it next
    assert len({answer.body for answer in answers if not isinstance(answer, BaseException)}) == 1
