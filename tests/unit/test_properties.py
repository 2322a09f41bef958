"""Properties of the sizing, pricing and ranking code that must hold for every catalog model and GPU."""

from __future__ import annotations

import itertools
import math
from datetime import UTC, date, datetime

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.catalog import Catalog, DiffusionModel, LlmModel
from domain.performance.memory import (
    BYTES_PER_PARAM,
    KV_BYTES,
    inference_memory,
    kv_bytes_per_sequence,
    kv_bytes_per_token,
    weights_bytes,
)
from domain.performance.training_memory import training_memory
from domain.planning import EstimateRequest, RecommendationRequest, estimate, recommend
from domain.pricing.costs import HOURS_PER_MONTH
from domain.workloads.requests import (
    Constraints,
    Currency,
    FineTuningWorkload,
    ImageGenerationWorkload,
    InferenceWorkload,
    TrainingWorkload,
)
from domain.workloads.resolve import WorkloadError
from domain.workloads.results import ExchangeRate, Option, Recommendation

NOW = datetime(2026, 11, 29, tzinfo=UTC)
RATE = ExchangeRate(usd_to_cny=7.1, as_of=date(2026, 11, 29), source="test")
CURRENCIES: tuple[Currency, ...] = ("USD", "CNY")
PROPERTY = settings(deadline=None, max_examples=60, derandomize=True, database=None)
FEW = settings(deadline=None, max_examples=40, derandomize=True, database=None)

# Precisions from fewest to most bytes per parameter; within a group the figures are (nearly) equal.
WEIGHT_ORDER = (("int4", "fp4"), ("fp8", "int8"), ("bf16", "fp16"), ("fp32",))
KV_ORDER = (("fp8",), ("bf16", "fp16"), ("fp32",))


def llm_ids(catalog: Catalog) -> list[str]:
    return [model.id for model in catalog.models if isinstance(model, LlmModel)]


def diffusion_ids(catalog: Catalog) -> list[str]:
    return [model.id for model in catalog.models if isinstance(model, DiffusionModel)]


def llm(catalog: Catalog, model_id: str) -> LlmModel:
    model = catalog.model(model_id)
    assert isinstance(model, LlmModel)
    return model


def optional(strategy: st.SearchStrategy) -> st.SearchStrategy:
    return st.none() | strategy


def inference_workloads(models: list[str], longest: int = 200_000) -> st.SearchStrategy[InferenceWorkload]:
    return st.builds(
        InferenceWorkload,
        model=st.sampled_from(models),
        precision=optional(st.sampled_from(["fp32", "bf16", "fp16", "fp8", "int8", "int4", "fp4"])),
        kv_cache_precision=optional(st.sampled_from(["fp32", "bf16", "fp16", "fp8"])),
        input_tokens=st.integers(1, longest),
        output_tokens=st.integers(1, longest // 10),
        concurrency=optional(st.integers(1, 100_000)),
        requests_per_second=optional(st.floats(0.01, 10_000)),
        max_ttft_ms=optional(st.floats(1, 600_000)),
        max_tpot_ms=optional(st.floats(1, 10_000)),
    )


def training_workloads(models: list[str]) -> st.SearchStrategy[TrainingWorkload]:
    return st.builds(
        TrainingWorkload,
        model=st.sampled_from(models),
        precision=st.sampled_from(["fp32", "bf16", "fp16", "fp8"]),
        train_tokens=st.floats(1e3, 1e13),
        sequence_length=st.integers(128, 262_144),
        optimizer=st.sampled_from(["adamw", "adamw_8bit"]),
        target_days=optional(st.floats(0.01, 3650)),
    )


def fine_tuning_workloads(models: list[str]) -> st.SearchStrategy[FineTuningWorkload]:
    return st.builds(
        FineTuningWorkload,
        model=st.sampled_from(models),
        method=st.sampled_from(["full", "lora", "qlora"]),
        lora_rank=st.integers(1, 4096),
        precision=st.sampled_from(["fp32", "bf16", "fp16", "fp8"]),
        train_tokens=st.floats(1e3, 1e12),
        sequence_length=st.integers(128, 262_144),
        optimizer=st.sampled_from(["adamw", "adamw_8bit"]),
        target_hours=optional(st.floats(0.01, 87_600)),
    )


def image_workloads(models: list[str]) -> st.SearchStrategy[ImageGenerationWorkload]:
    return st.builds(
        ImageGenerationWorkload,
        model=st.sampled_from(models),
        width=st.integers(8, 1024).map(lambda n: n * 8),
        height=st.integers(8, 1024).map(lambda n: n * 8),
        steps=optional(st.integers(1, 1000)),
        images_per_hour=optional(st.floats(0.01, 1e7)),
        precision=st.sampled_from(["fp32", "bf16", "fp16", "fp8", "int8"]),
    )


def any_workload(catalog: Catalog) -> st.SearchStrategy:
    models = llm_ids(catalog)
    return st.one_of(
        inference_workloads(models),
        training_workloads(models),
        fine_tuning_workloads(models),
        image_workloads(diffusion_ids(catalog)),
    )


def constraints() -> st.SearchStrategy[Constraints | None]:
    return optional(
        st.builds(
            Constraints,
            gpu_count=optional(st.integers(1, 256)),
            max_gpus=st.integers(1, 512),
            max_nodes=st.integers(1, 64),
            single_node=st.booleans(),
            require_offer=st.booleans(),
            pricing=optional(
                st.lists(
                    st.sampled_from(["on_demand", "reserved_1y", "reserved_3y", "spot", "capacity_block"]),
                    min_size=1,
                    unique=True,
                )
            ),
            max_usd_per_hour=optional(st.floats(0.5, 10_000)),
        )
    )


def run(catalog: Catalog, request: RecommendationRequest) -> Recommendation:
    return recommend(catalog, request, now=NOW, lang=request.lang or "en", rate=RATE)


# ---------------------------------------------------------------- memory


@PROPERTY
@given(data=st.data())
def test_more_memory_never_stops_a_fit(reference: Catalog, data: st.DataObject) -> None:
    model = llm(reference, data.draw(st.sampled_from(llm_ids(reference)), label="model"))
    gpu = reference.gpu(data.draw(st.sampled_from([g.id for g in reference.gpus]), label="gpu"))
    assert gpu is not None
    precision = data.draw(st.sampled_from(["bf16", "fp8", "int4"]), label="precision")
    tokens = data.draw(st.integers(128, 32_768), label="sequence_tokens")
    tensor = data.draw(st.sampled_from([1, 2, 4, 8]), label="tensor_parallel")
    scale = data.draw(st.floats(1.0, 4.0), label="memory scale")
    bigger = msgspec.structs.replace(gpu, memory_gb=gpu.memory_gb * scale)

    before = inference_memory(model, gpu, precision, "bf16", tokens, tensor, 1)
    after = inference_memory(model, bigger, precision, "bf16", tokens, tensor, 1)
    assert after.max_concurrency >= before.max_concurrency
    assert after.kv_free_bytes >= before.kv_free_bytes
    if before.fits:
        assert after.fits


def in_order(values: list[list[float]]) -> bool:
    """Each group's largest value is at most the next group's smallest."""
    return all(max(low) <= min(high) for low, high in itertools.pairwise(values))


@PROPERTY
@given(data=st.data())
def test_higher_precision_never_needs_less_inference_memory(reference: Catalog, data: st.DataObject) -> None:
    model = llm(reference, data.draw(st.sampled_from(llm_ids(reference)), label="model"))
    tokens = data.draw(st.integers(1, 65_536), label="tokens")
    tensor = data.draw(st.sampled_from([1, 2, 4, 8]), label="tensor_parallel")
    assert {p for group in WEIGHT_ORDER for p in group} == set(BYTES_PER_PARAM) - {"nf4"}
    assert {p for group in KV_ORDER for p in group} == set(KV_BYTES)

    assert in_order([[weights_bytes(model, p) for p in group] for group in WEIGHT_ORDER])
    assert in_order([[kv_bytes_per_token(model, p) for p in group] for group in KV_ORDER])
    assert in_order([[kv_bytes_per_sequence(model, p, tokens, tensor) for p in group] for group in KV_ORDER])

    # The same GPU holds no more sequences at a wider precision.
    gpu = reference.gpu(data.draw(st.sampled_from([g.id for g in reference.gpus]), label="gpu"))
    assert gpu is not None
    held = [
        [inference_memory(model, gpu, p, "bf16", tokens, tensor, 1).max_concurrency for p in group]
        for group in WEIGHT_ORDER
    ]
    assert all(min(low) >= max(high) for low, high in itertools.pairwise(held)), held


@PROPERTY
@given(data=st.data())
def test_training_memory_orders_optimizers_and_methods(reference: Catalog, data: st.DataObject) -> None:
    model = llm(reference, data.draw(st.sampled_from(llm_ids(reference)), label="model"))
    gpu = reference.gpu(data.draw(st.sampled_from([g.id for g in reference.gpus]), label="gpu"))
    assert gpu is not None
    gpus = data.draw(st.sampled_from([1, 2, 4, 8, 16, 64]), label="gpus")
    tensor = data.draw(st.sampled_from([t for t in (1, 2, 4, 8) if t <= gpus]), label="tensor_parallel")
    sequence = data.draw(st.integers(128, 32_768), label="sequence_length")
    recompute = data.draw(st.sampled_from([0, 1, 2**30]), label="recompute")
    # Realistic adapter ranks: far past the hidden size an adapter outgrows the model it adapts.
    rank = data.draw(st.integers(1, 512), label="lora_rank")

    def states(method: str, optimizer: str) -> tuple[float, float]:
        memory = training_memory(
            model,
            gpu,
            method=method,
            optimizer=optimizer,
            sequence_length=sequence,
            gpus=gpus,
            tensor_parallel=tensor,
            recompute_layers=min(recompute, model.layers),
            lora_rank=rank,
        )
        return memory.weights_bytes + memory.optimizer_bytes, memory.required_bytes

    for method in ("full", "lora", "qlora"):
        assert states(method, "adamw")[0] >= states(method, "adamw_8bit")[0]
        assert states(method, "adamw")[1] >= states(method, "adamw_8bit")[1]
    for optimizer in ("adamw", "adamw_8bit"):
        full, lora, qlora = (states(method, optimizer)[0] for method in ("full", "lora", "qlora"))
        assert full >= lora >= qlora


# ---------------------------------------------------------------- costs


def offer_hourly(option: Option, currency_factor: float) -> float:
    """The unrounded hourly price of an option's rental, from its offer."""
    offer = option.offer
    assert offer is not None
    return offer.usd_per_gpu_hour * offer.gpus_per_instance * offer.instances * currency_factor


def check_hourly_and_monthly(option: Option, hourly: float) -> None:
    cost = option.cost
    assert cost is not None
    assert abs(cost.hourly - hourly) <= 0.005 + 1e-9
    assert abs(cost.monthly - round(hourly * HOURS_PER_MONTH, 2)) <= 0.01 + 1e-9
    assert abs(cost.monthly - round(hourly * 730, 2)) <= 0.01 + 1e-9


@PROPERTY
@given(data=st.data())
def test_run_cost_is_hours_times_price(reference: Catalog, data: st.DataObject) -> None:
    models = llm_ids(reference)
    workload = data.draw(st.one_of(training_workloads(models), fine_tuning_workloads(models)), label="workload")
    # keep the sequence within the model's context, so every draw is a valid request
    context = llm(reference, workload.model or "").max_context
    workload = msgspec.structs.replace(workload, sequence_length=min(workload.sequence_length, context))
    currency = data.draw(st.sampled_from(CURRENCIES), label="currency")
    result = run(reference, RecommendationRequest(workload=workload, currency=currency))
    factor = RATE.usd_to_cny if currency == "CNY" else 1.0
    for option in result.options:
        if option.cost is None:
            continue
        assert option.performance is not None and option.performance.run_hours is not None
        assert option.cost.currency == currency
        hourly = offer_hourly(option, factor)
        check_hourly_and_monthly(option, hourly)
        assert option.cost.per_run is not None
        assert option.cost.per_million_tokens is None and option.cost.per_1000_images is None
        assert math.isclose(option.cost.per_run, hourly * option.performance.run_hours.expected, rel_tol=0.01)
        # and the rounded figures the client sees agree with each other within the same 1%, plus the half cent an
        # hour that rounding the hourly price to cents can move it (1.3% of a 0.33 hourly price)
        run_hours = option.performance.run_hours.expected
        rounded = option.cost.hourly * run_hours
        assert math.isclose(option.cost.per_run, rounded, rel_tol=0.01, abs_tol=0.005 * run_hours)


@PROPERTY
@given(data=st.data())
def test_token_cost_is_price_over_throughput(reference: Catalog, data: st.DataObject) -> None:
    workload = data.draw(inference_workloads(llm_ids(reference), longest=3000), label="workload")
    currency = data.draw(st.sampled_from(CURRENCIES), label="currency")
    try:
        result = run(reference, RecommendationRequest(workload=workload, currency=currency))
    except WorkloadError:
        return  # e.g. a context longer than the model's
    factor = RATE.usd_to_cny if currency == "CNY" else 1.0
    for option in result.options:
        if option.cost is None:
            continue
        assert option.performance is not None and option.performance.tokens_per_second is not None
        hourly = offer_hourly(option, factor)
        check_hourly_and_monthly(option, hourly)
        assert option.cost.per_million_tokens is not None
        expected = hourly / (option.performance.tokens_per_second.expected * 3600) * 1e6
        assert math.isclose(option.cost.per_million_tokens, expected, rel_tol=0.01)


@FEW
@given(data=st.data())
def test_image_cost_is_price_over_images(reference: Catalog, data: st.DataObject) -> None:
    workload = data.draw(image_workloads(diffusion_ids(reference)), label="workload")
    result = run(reference, RecommendationRequest(workload=workload))
    for option in result.options:
        if option.cost is None:
            continue
        assert option.performance is not None and option.performance.images_per_hour is not None
        hourly = offer_hourly(option, 1.0)
        check_hourly_and_monthly(option, hourly)
        assert option.cost.per_1000_images is not None
        expected = hourly / option.performance.images_per_hour.expected * 1000
        assert math.isclose(option.cost.per_1000_images, expected, rel_tol=0.01)


# ---------------------------------------------------------------- ranking


@PROPERTY
@given(data=st.data())
def test_ranking_is_deterministic_and_ordered(reference: Catalog, data: st.DataObject) -> None:
    # mostly unconstrained requests, so that most rankings have many options to order
    request = RecommendationRequest(
        workload=data.draw(any_workload(reference), label="workload"),
        constraints=data.draw(st.one_of(st.none(), st.none(), constraints()), label="constraints"),
        objective=data.draw(st.sampled_from(["balanced", "cost", "speed"]), label="objective"),
        currency=data.draw(st.sampled_from(CURRENCIES), label="currency"),
        lang=data.draw(st.sampled_from(["en", "zh"]), label="lang"),
        limit=data.draw(st.integers(1, 50), label="limit"),
    )
    try:
        first = run(reference, request)
    except WorkloadError:
        return
    second = run(reference, request)
    assert msgspec.to_builtins(first) == msgspec.to_builtins(second)

    ranks = [option.rank for option in first.options]
    assert ranks == list(range(1, len(ranks) + 1))
    assert len(ranks) <= request.limit
    # options that meet the targets first, then the objective (the score; under `cost` the cost of meeting the need,
    # the score breaking ties): a price's age never outranks it
    if request.objective == "cost":
        met = [option.meets_targets for option in first.options]
        assert met == sorted(met, reverse=True)
    else:
        keys = [(option.meets_targets, option.score) for option in first.options]
        assert keys == sorted(keys, reverse=True)
    # every GPU of the catalog is either an option or an exclusion, never both
    shown = [option.gpu.id for option in first.options]
    left_out = [exclusion.gpu for exclusion in first.excluded]
    assert sorted(shown + left_out) == sorted(gpu.id for gpu in reference.gpus)


# ---------------------------------------------------------------- robustness


@PROPERTY
@given(data=st.data())
def test_valid_workloads_never_crash(reference: Catalog, data: st.DataObject) -> None:
    request = RecommendationRequest(
        workload=data.draw(any_workload(reference), label="workload"),
        constraints=data.draw(constraints(), label="constraints"),
        objective=data.draw(st.sampled_from(["balanced", "cost", "speed"]), label="objective"),
        currency=data.draw(st.sampled_from(CURRENCIES), label="currency"),
    )
    try:
        result = run(reference, request)
    except WorkloadError as error:
        assert error.field and error.message
        return
    assert isinstance(result, Recommendation)
    for option in result.options:
        assert option.feasible
        assert option.gpu_count >= 1
        assert option.score >= 0


CUSTOM_MODELS = st.fixed_dictionaries(
    {
        "params_b": st.floats(0.01, 5000),
        "layers": st.integers(1, 200),
        "hidden_size": st.integers(64, 32_768),
        "attention_heads": st.integers(1, 256),
        "attention": st.sampled_from(["mha", "gqa", "mla"]),
    },
    optional={
        "active_params_b": st.floats(0.01, 5000),
        "kv_heads": st.integers(1, 256),
        "head_dim": st.integers(8, 512),
        "kv_lora_rank": st.integers(1, 2048),
        "qk_rope_head_dim": st.integers(1, 256),
        "routed_experts": st.integers(2, 512),
        "experts_per_token": st.integers(1, 512),
        "max_context": st.integers(1, 1_000_000),
    },
)


@settings(deadline=None, max_examples=80, derandomize=True, database=None)
@given(custom=CUSTOM_MODELS, kind=st.sampled_from(["inference", "training", "fine_tuning"]), data=st.data())
def test_custom_models_never_crash(
    reference: Catalog, custom: dict[str, object], kind: str, data: st.DataObject
) -> None:
    """Whatever a client describes, the answer is a recommendation, an estimate or a WorkloadError."""
    workload: dict[str, object] = {"kind": kind, "custom_model": custom}
    if kind == "inference":
        workload |= {"input_tokens": data.draw(st.integers(1, 2048)), "output_tokens": data.draw(st.integers(1, 512))}
    else:
        workload |= {"sequence_length": data.draw(st.integers(128, 4096))}
    try:
        request = msgspec.convert({"workload": workload}, RecommendationRequest)
        recommend(reference, request, now=NOW, lang="en", rate=RATE)
        estimate(
            reference,
            msgspec.convert({"workload": workload, "gpu": "h100-sxm", "gpu_count": 8}, EstimateRequest),
            now=NOW,
            lang="zh",
            rate=RATE,
        )
    except (WorkloadError, msgspec.ValidationError):
        pass
