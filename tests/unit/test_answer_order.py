"""Answers never depend on the order of earlier requests: every engine, precision and kind, on one catalog."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.adapters.storage.reference import load_reference_catalog
from domain.catalog import Catalog
from domain.performance.fp8_gemms import FP8_GEMM_US
from domain.planning import EstimateRequest, RecommendationRequest, estimate, recommend
from domain.planning.facts import SHARED
from domain.workloads.results import ExchangeRate

NOW = datetime(2026, 12, 1, tzinfo=UTC)
RATE = ExchangeRate(usd_to_cny=7.1, as_of=NOW.date(), source="test")
ENGINES = ("vllm", "sglang", "trtllm")
PRECISIONS = ("bf16", "fp8", "int4", "fp4")
INFERENCE = [
    {"kind": "inference", "model": model, "engine": engine, "precision": precision, "concurrency": 16}
    for model in ("llama-3.1-70b", "deepseek-r1")
    for engine in ENGINES
    for precision in PRECISIONS
] + [
    {"kind": "inference", "model": "llama-3.1-8b", "engine": engine, "kv_cache_precision": "fp8", "input_tokens": 4000}
    for engine in ENGINES
]
OTHER_KINDS = (
    [
        {"kind": "training", "model": "llama-3.1-8b", "train_tokens": 1e10, "precision": precision}
        for precision in ("bf16", "fp8")
    ]
    + [
        {"kind": "fine_tuning", "model": "llama-3.1-70b", "method": method, "train_tokens": 1e8}
        for method in ("full", "lora", "qlora")
    ]
    + [
        {"kind": "image_generation", "model": "sdxl", "images_per_hour": 500, "precision": precision}
        for precision in ("bf16", "fp8")
    ]
)
# (kind of call, body): a recommendation over the whole catalog, or an estimate of one configuration.
REQUESTS: list[tuple[str, dict[str, Any]]] = (
    [("recommend", {"workload": w, "limit": 3}) for w in INFERENCE[::3] + OTHER_KINDS]
    + [("estimate", {"workload": w, "gpu": "h200", "gpu_count": 8}) for w in INFERENCE + OTHER_KINDS]
    + [("recommend", {"workload": INFERENCE[1], "constraints": {"providers": ["lambda", "runpod"]}, "lang": "zh"})]
)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_reference_catalog()


@pytest.fixture(autouse=True)
def fresh_store() -> Iterator[None]:
    SHARED.clear()
    yield
    SHARED.clear()


def answer(catalog: Catalog, call: str, body: dict[str, Any]) -> bytes:
    if call == "recommend":
        request = msgspec.convert(body, RecommendationRequest)
        return msgspec.json.encode(recommend(catalog, request, now=NOW, lang="en", rate=RATE))
    return msgspec.json.encode(estimate(catalog, msgspec.convert(body, EstimateRequest), now=NOW, lang="en", rate=RATE))


def alone(catalog: Catalog, call: str, body: dict[str, Any]) -> bytes:
    """The answer with nothing shared from earlier requests."""
    SHARED.clear()
    return answer(catalog, call, body)


@settings(max_examples=30, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    earlier=st.lists(st.sampled_from(REQUESTS), min_size=0, max_size=4),
    last=st.sampled_from(REQUESTS),
    sibling_engine=st.sampled_from(ENGINES),
)
def test_an_answer_does_not_depend_on_the_requests_before_it(
    catalog: Catalog, earlier: list[tuple[str, dict[str, Any]]], last: tuple[str, dict[str, Any]], sibling_engine: str
) -> None:
    SHARED.clear()
    call, body = last
    # The same shape on another engine just before: the request that once got another engine's latency.
    sibling = body | {"workload": body["workload"] | {"engine": sibling_engine}}
    if body["workload"]["kind"] != "inference":
        sibling = body
    for call_before, body_before in [*earlier, (call, sibling)]:
        answer(catalog, call_before, body_before)
    after_others = answer(catalog, *last)
    assert after_others == alone(catalog, *last)


@pytest.mark.parametrize("precision", ["fp8", "bf16"])
def test_a_tensorrt_llm_estimate_after_a_vllm_one_of_the_same_shape_states_its_own_fp8_latency(
    catalog: Catalog, precision: str
) -> None:
    shape = {"kind": "inference", "model": "llama-3.1-70b", "precision": precision, "concurrency": 16}
    shape["kv_cache_precision"] = "bf16"  # stated, as engines default it differently

    def body(engine: str) -> dict[str, Any]:
        # One layout for both engines, so that they would meet on one model copy.
        return {"workload": shape | {"engine": engine}, "gpu": "h200", "gpu_count": 8, "parallelism": {"tensor": 8}}

    answer(catalog, "estimate", body("vllm"))
    trtllm = answer(catalog, "estimate", body("trtllm"))
    assert trtllm == alone(catalog, "estimate", body("trtllm"))
    latency = [a for a in msgspec.json.decode(trtllm)["assumptions"] if a["name"] == "fp8_gemm_latency_us"]
    if precision == "fp8":
        # The H200 is Hopper: TensorRT-LLM's measured FP8 GEMM latency, not vLLM's.
        assert [item["value"] for item in latency] == [FP8_GEMM_US[("trtllm", "hopper")].describe()]
    else:
        assert latency == []


def test_the_same_request_in_another_order_of_its_lists_gets_the_same_answer(catalog: Catalog) -> None:
    body: dict[str, Any] = {"workload": INFERENCE[0], "constraints": {"providers": ["lambda", "runpod", "aws"]}}
    first = answer(catalog, "recommend", body)
    body["constraints"]["providers"] = ["aws", "runpod", "lambda"]
    assert answer(catalog, "recommend", body) == first
