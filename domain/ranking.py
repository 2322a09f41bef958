"""Candidate configurations per GPU, their costs and scores, the ranking and the exclusions."""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import cached_property
from typing import Annotated, Any, NamedTuple

import msgspec

from domain.catalog import Catalog, DiffusionModel, Gpu, LlmModel, Offer, Pricing
from domain.efficiency import (
    INTER_NODE_GBPS,
    SCENARIOS,
    W4_DECODE,
    Scenario,
    confidence,
    factor,
    stack_of,
)
from domain.estimates import (
    Assumption,
    Cost,
    Currency,
    ExchangeRate,
    Exclusion,
    GpuSummary,
    Lang,
    MemoryUse,
    OfferUsed,
    Option,
    Parallelism,
    PerformanceEstimate,
    Range,
    Recommendation,
    Requirements,
    ScoreBreakdown,
    TcoHint,
)
from domain.explain import pricing_name, recommendation_summary, say, target_names
from domain.memory import (
    BYTES_PER_PARAM,
    GB,
    GIB,
    GPU_MEMORY_UTILIZATION,
    MAX_BATCH,
    Activations,
    DiffusionPipeline,
    InferenceMemory,
    InstanceShape,
    TrainingMemory,
    TrainingStates,
    diffusion_memory,
    kv_bytes_per_sequence,
    kv_bytes_per_token,
    runtime_reserve_bytes,
    training_memory,
    training_usable_bytes,
    usable_memory_bytes,
    weights_bytes,
)
from domain.performance import (
    WEIGHT_ONLY,
    InstanceSpeed,
    TrainingSpeed,
    compute_tflops,
    image_tflop,
    seconds_per_image,
    training_flops_per_token,
)
from domain.pricing import (
    DEFAULT_PRICE_MAX_AGE_DAYS,
    HOURS_PER_MONTH,
    PRICE_AGE_WARNING_DAYS,
    Rental,
    allowed_offers,
    can_host,
    is_stale,
    per_1000_images,
    per_million_tokens,
    per_run,
    rent,
    stale_count,
    user_price_assumption,
    with_user_prices,
)
from domain.tco import owned_monthly_usd
from domain.workloads import (
    DEFAULT_PRICING,
    Constraints,
    FineTuningWorkload,
    ImageGenerationWorkload,
    InferenceWorkload,
    Objective,
    Resolved,
    TrainingWorkload,
    Workload,
    WorkloadSpec,
    check_providers,
    normalise,
    resolve_prices,
    unknown_name,
    workload_kind,
)

GPUS_PER_NODE = 8
TENSOR_PARALLEL = (1, 2, 4, 8)
LIMIT_MAX = 50

WEIGHTS: dict[Objective, dict[str, float]] = {
    "balanced": {"performance": 0.30, "cost": 0.30, "fit": 0.15, "ecosystem": 0.15, "scalability": 0.10},
    "cost": {"performance": 0.15, "cost": 0.55, "fit": 0.10, "ecosystem": 0.10, "scalability": 0.10},
    "speed": {"performance": 0.55, "cost": 0.10, "fit": 0.10, "ecosystem": 0.15, "scalability": 0.10},
}
# The seeds: CUDA is the most mature; ROCm costs ~10-20% and needs tuning (more in training); Gaudi needs manual
# integration; Ascend's stack is the least portable.
ECOSYSTEM_SCORE = {
    "inference": {"cuda": 1.0, "rocm": 0.85, "gaudi": 0.6, "cann": 0.5},
    "image_generation": {"cuda": 1.0, "rocm": 0.8, "gaudi": 0.6, "cann": 0.5},
    "training": {"cuda": 1.0, "rocm": 0.75, "gaudi": 0.55, "cann": 0.45},
}
SCALABILITY_SCORE = {
    "nvswitch": 1.0,
    "infinity_fabric": 0.95,
    "nvlink": 0.85,
    "ethernet": 0.8,
    "hccs": 0.7,
    "nvlink_bridge": 0.5,
    "pcie": 0.3,
}


class RecommendationRequest(WorkloadSpec, kw_only=True, frozen=True):
    """A workload, what the answer may contain and how to rank it."""

    workload: Workload
    constraints: Constraints | None = None
    objective: Objective = "balanced"
    currency: Currency = "USD"
    lang: Lang | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=LIMIT_MAX)] = 10


class EstimateRequest(WorkloadSpec, kw_only=True, frozen=True):
    """A workload on one explicit configuration."""

    workload: Workload
    gpu: Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
    gpu_count: Annotated[int, msgspec.Meta(ge=1, le=4096)]
    provider: Annotated[str, msgspec.Meta(max_length=64)] | None = None
    pricing: Pricing | None = None
    currency: Currency = "USD"
    lang: Lang | None = None


@dataclass(frozen=True)
class Money:
    """How money figures are shown: USD, or CNY at a stated rate."""

    currency: Currency
    rate: ExchangeRate

    @property
    def factor(self) -> float:
        return self.rate.usd_to_cny if self.currency == "CNY" else 1.0


@dataclass
class Candidate:
    """One configuration of one GPU, before scoring."""

    gpu: Gpu
    gpu_count: int
    nodes: int
    parallelism: Parallelism
    rental: Rental | None
    memory: MemoryUse
    performance: PerformanceEstimate
    unmet: list[str]
    reasons: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    assumptions: list[Assumption] = field(default_factory=list)
    perf_value: float = 0.0  # higher is better
    unit_cost_usd: float | None = None  # per million tokens, per run or per 1000 images


class Excluded(Exception):
    """A GPU that cannot be an option; carries the message code and its figures."""

    def __init__(self, code: str, **figures: object) -> None:
        super().__init__(code)
        self.code = code
        self.figures = figures


@dataclass(frozen=True)
class Plan:
    """Everything fixed for one request; derived facts are computed once per request and kept."""

    catalog: Catalog
    resolved: Resolved
    constraints: Constraints
    lang: Lang
    today: date
    price_max_age_days: int = DEFAULT_PRICE_MAX_AGE_DAYS

    @cached_property
    def pricing(self) -> tuple[str, ...]:
        return tuple(self.constraints.pricing or DEFAULT_PRICING)

    @property
    def fixed_count(self) -> int | None:
        return self.constraints.gpu_count

    @cached_property
    def kind(self) -> str:
        return workload_kind(self.resolved.workload)

    @cached_property
    def _allowed_offers(self) -> dict[str, list[Offer]]:
        """Offers under the allowed pricing models and providers by GPU id, in the catalog's (id) order."""
        by_gpu: dict[str, list[Offer]] = {}
        allowed = allowed_offers(self.catalog.offers, self.pricing, self.constraints.providers)
        for offer in with_user_prices(allowed, self.constraints.prices, self.pricing[0], self.today):
            by_gpu.setdefault(offer.gpu, []).append(offer)
        return by_gpu

    def offers(self, gpu: Gpu) -> list[Offer]:
        return self._allowed_offers.get(gpu.id, [])

    @cached_property
    def inference(self) -> _InferenceSizing:
        workload, model = self.resolved.workload, self.resolved.model
        assert isinstance(workload, InferenceWorkload) and isinstance(model, LlmModel)
        return _InferenceSizing(self, model, workload)

    @cached_property
    def images(self) -> tuple[DiffusionPipeline, float]:
        """The pipeline's memory figures and the TFLOP of one image, neither of which depends on the GPU."""
        workload, model = self.resolved.workload, self.resolved.model
        assert isinstance(workload, ImageGenerationWorkload) and isinstance(model, DiffusionModel)
        assert workload.steps is not None
        return (
            DiffusionPipeline.of(model, workload.precision, workload.width, workload.height),
            image_tflop(model, workload.width, workload.height, workload.steps),
        )

    @cached_property
    def training(self) -> _TrainingSizing:
        workload, model = self.resolved.workload, self.resolved.model
        assert isinstance(workload, TrainingWorkload | FineTuningWorkload) and isinstance(model, LlmModel)
        return _TrainingSizing(self, model, workload)

    def say(self, code: str, **figures: object) -> str:
        return say(code, self.lang, **figures)


def _range(values: dict[Scenario, float]) -> Range:
    """Expected from the expected scenario; low/high are the smaller/larger of the two ends of the band."""
    ends = (values["pessimistic"], values["optimistic"])
    return Range(expected=_round(values["expected"]), low=_round(min(ends)), high=_round(max(ends)))


def _round(value: float) -> float:
    if value == 0 or not math.isfinite(value):
        return value
    digits = max(0, 3 - math.floor(math.log10(abs(value))))
    return round(value, digits)


def _rental(plan: Plan, gpu: Gpu, gpus: int, per_machine: int) -> Rental | None:
    exact = plan.fixed_count is not None

    def within_limits(gpus: int, machines: int) -> bool:
        return _broken_limit(plan, gpus, machines) is None

    rental = rent(plan.offers(gpu), gpus, per_machine, exact=exact, fits=within_limits)
    if rental is None:
        unlimited = rent(plan.offers(gpu), gpus, per_machine, exact=exact)
        if unlimited is not None:
            _check_limits(plan, unlimited.gpus, unlimited.machines)  # raises the limit it breaks
        if plan.constraints.require_offer:
            raise Excluded("no_offer", detail=_unrented_detail(plan, gpu) or _machine_detail(plan, per_machine))
    return rental


def _require_renter(plan: Plan, gpu: Gpu) -> None:
    """Exclude a GPU nobody rents under the constraints once it is known to fit, before its layout is searched.

    Whatever layout the search found, renting it would fail with this same `no_offer`.
    """
    if plan.constraints.require_offer and not plan.offers(gpu):
        detail = _unrented_detail(plan, gpu)
        assert detail is not None
        raise Excluded("no_offer", detail=detail)


def _require_host(plan: Plan, gpu: Gpu, per_machine: set[int]) -> None:
    """Exclude a GPU before its layout search when every layout it may choose needs the same GPUs per machine and
    no allowed offer has such instances: renting would fail with this same `no_offer` whatever the search found.
    """
    if plan.constraints.require_offer and len(per_machine) == 1:
        (size,) = per_machine
        if not any(can_host(offer, size) for offer in plan.offers(gpu)):
            raise Excluded("no_offer", detail=_machine_detail(plan, size))


def _unrented_detail(plan: Plan, gpu: Gpu) -> str | None:
    """Why no offer of the GPU is allowed; None when some are (the instance size is then what fails)."""
    offers = plan.catalog.offers_for_gpu(gpu.id)
    if not offers:
        return "（目录中没有人出租）" if plan.lang == "zh" else " (nobody in the catalog rents it)"
    if plan.offers(gpu):
        return None
    models = sorted({o.pricing for o in offers})
    if plan.lang == "zh":
        return f"（现有报价的计价方式：{', '.join(models)}）"
    return f" (offers exist as {', '.join(models)})"


def _machine_detail(plan: Plan, per_machine: int) -> str:
    if plan.lang == "zh":
        return f"（需要单机 {per_machine} 卡的实例）"
    return f" (needs instances with {per_machine} GPUs in one machine)"


def _check_limits(plan: Plan, gpus: int, nodes: int) -> None:
    broken = _broken_limit(plan, gpus, nodes)
    if broken is not None:
        raise broken


def _broken_limit(plan: Plan, gpus: int, nodes: int) -> Excluded | None:
    """The exclusion for the first GPU or node limit a configuration breaks; None within all of them."""
    limits = plan.constraints
    if plan.fixed_count is None and gpus > limits.max_gpus:
        return Excluded("needs_more_gpus", gpus=gpus, limit=limits.max_gpus)
    if limits.single_node and nodes > 1:
        return Excluded("needs_more_nodes", nodes=nodes, limit=1)
    if nodes > limits.max_nodes:
        return Excluded("needs_more_nodes", nodes=nodes, limit=limits.max_nodes)
    return None


def _nodes(rental: Rental | None, gpus: int) -> int:
    return rental.machines if rental is not None else math.ceil(gpus / GPUS_PER_NODE)


def _common_notes(plan: Plan, candidate: Candidate) -> tuple[list[str], list[str]]:
    """The reasons and warnings every option gets after its planner's: software stack, GPU data, the price used."""
    gpu = candidate.gpu
    reasons: list[str] = []
    warnings: list[str] = []
    stack = stack_of(gpu)
    if stack in ("rocm", "gaudi", "cann"):
        warnings.append(plan.say(stack))
    if gpu.confidence == "low":
        warnings.append(plan.say("low_confidence_gpu", gpu=gpu.name))
    if confidence(gpu, plan.kind) == "spec_sheet":
        warnings.append(plan.say("spec_sheet", gpu=gpu.name))
    if candidate.rental is not None:
        offer = candidate.rental.offer
        days = candidate.rental.age_days(plan.today)
        if days > PRICE_AGE_WARNING_DAYS:
            warnings.append(plan.say("price_age", days=days, as_of=offer.as_of.isoformat()))
        provider = plan.catalog.provider(offer.provider)
        reasons.append(
            plan.say(
                "offer",
                provider=provider.name if provider else offer.provider,
                pricing=pricing_name(offer.pricing, plan.lang),
                price=offer.usd_per_gpu_hour,
                as_of=offer.as_of.isoformat(),
            )
        )
    elif plan.constraints.require_offer is False:
        warnings.append(plan.say("no_offer_priced"))
    return reasons, warnings


def _precision_check(gpu: Gpu, precision: str) -> None:
    if precision == "fp8" and not gpu.supports_fp8:
        raise Excluded("no_fp8", precision="FP8")
    if compute_tflops(gpu, precision) is None:
        raise Excluded("no_precision", precision=precision.upper())


# ---------------------------------------------------------------- inference


class _Instance:
    """One model instance shape (tensor x pipeline GPUs) on one GPU: its memory, and its speed when first asked."""

    def __init__(self, plan: Plan, gpu: Gpu, tensor: int, pipeline: int, memory: InferenceMemory) -> None:
        self.plan, self.gpu = plan, gpu
        self.tensor, self.pipeline, self.memory = tensor, pipeline, memory

    @property
    def gpus(self) -> int:
        return self.tensor * self.pipeline

    @property
    def capacity(self) -> int:
        return min(self.memory.max_concurrency, MAX_BATCH)

    @cached_property
    def speed(self) -> InstanceSpeed:
        # Lazy: a GPU whose rental fails never needs it unless the request sets latency or throughput targets.
        sizing = self.plan.inference
        workload = sizing.workload
        return InstanceSpeed(
            sizing.model,
            self.gpu,
            sizing.precision,
            sizing.kv_precision,
            self.tensor,
            self.pipeline,
            workload.input_tokens,
            workload.output_tokens,
        )


class _InferenceSizing:
    """An inference request's instance shapes, whose memory figures do not depend on the GPU, and the shapes that
    fit by GPU memory.

    Inference memory depends on the GPU only through its usable memory, so GPUs with equal memory share the
    shapes found for the first of them.
    """

    def __init__(self, plan: Plan, model: LlmModel, workload: InferenceWorkload) -> None:
        assert workload.precision is not None and workload.kv_cache_precision is not None
        self.model = model
        self.workload = workload
        self.precision = workload.precision
        self.kv_precision = workload.kv_cache_precision
        self.tokens = workload.input_tokens + workload.output_tokens
        self.fixed = plan.fixed_count
        max_nodes = 1 if plan.constraints.single_node else plan.constraints.max_nodes
        if self.fixed is not None:
            max_nodes = max(1, self.fixed // GPUS_PER_NODE)
        self.max_nodes = max_nodes
        self._shapes: dict[int, list[tuple[int, InstanceShape]]] = {}
        self._fitting: dict[float, list[tuple[int, int, InstanceShape]]] = {}

    @cached_property
    def request_assumptions(self) -> tuple[Assumption, Assumption, Assumption]:
        """The assumptions every option of the request states alike: weights, KV cache, sequence."""
        workload = self.workload
        return (
            Assumption(
                name="weights",
                value=f"{workload.precision}, {BYTES_PER_PARAM[workload.precision or 'bf16']:g} "
                "bytes per parameter incl. quantisation scales",
                source="perf-model.md section 1",
            ),
            Assumption(
                name="kv_cache",
                value=f"{workload.kv_cache_precision}, "
                f"{kv_bytes_per_token(self.model, workload.kv_cache_precision or 'bf16'):,.0f} bytes per token",
                source="models.md; perf-model.md section 1",
            ),
            Assumption(
                name="sequence",
                value=f"{workload.input_tokens} input + {workload.output_tokens} output tokens, "
                "mean decode context input + output/2",
                source="request",
            ),
        )

    def fitting(self, usable_bytes: float) -> list[tuple[int, int, InstanceShape]]:
        """(tensor, pipeline, shape) of the instances that fit on GPUs with this usable memory, with the fewest
        pipeline stages that fit any; [] if none does."""
        fitting = self._fitting.get(usable_bytes)
        if fitting is None:
            fitting = self._fitting[usable_bytes] = self._search(usable_bytes)
        return fitting

    def _search(self, usable_bytes: float) -> list[tuple[int, int, InstanceShape]]:
        for pipeline in range(1, self.max_nodes + 1):
            fitting = [
                (tensor, pipeline, shape)
                for tensor, shape in self._shapes_of(pipeline)
                if shape.max_concurrency(usable_bytes) >= 1
            ]
            if fitting:
                return fitting
        return []

    def _shapes_of(self, pipeline: int) -> list[tuple[int, InstanceShape]]:
        """(tensor parallel, shape) of the instances with this many stages the heads and a fixed count allow."""
        shapes = self._shapes.get(pipeline)
        if shapes is None:
            fixed = self.fixed
            shapes = self._shapes[pipeline] = [
                (tensor, InstanceShape.of(self.model, self.precision, self.kv_precision, self.tokens, tensor, pipeline))
                for tensor in (TENSOR_PARALLEL if pipeline == 1 else (GPUS_PER_NODE,))
                if not self.model.attention_heads % tensor and (fixed is None or not fixed % (tensor * pipeline))
            ]
        return shapes


def _inference_shapes(plan: Plan, gpu: Gpu) -> tuple[float, list[tuple[int, int, InstanceShape]]]:
    """The GPU's usable memory and the instance shapes to lay out on it; excludes the GPU when none fits, then when
    nobody rents it, then when no offer has machines for any of them."""
    usable = usable_memory_bytes(gpu)
    fitting = plan.inference.fitting(usable)
    if not fitting:
        sizing = plan.inference
        needed = weights_bytes(sizing.model, sizing.precision) + runtime_reserve_bytes(sizing.model)
        raise Excluded("does_not_fit", gpus=sizing.fixed or sizing.max_nodes * GPUS_PER_NODE, needed_gb=needed / GB)
    _require_renter(plan, gpu)
    _require_host(plan, gpu, {_per_machine(tensor, pipeline) for tensor, pipeline, _ in fitting})
    return usable, fitting


def _largest_batch(capacity: int, ok: Callable[[int], bool]) -> int:
    """The largest batch up to `capacity` that passes `ok` (0 if none)."""
    low, high = 0, capacity
    while low < high:
        middle = (low + high + 1) // 2
        if ok(middle):
            low = middle
        else:
            high = middle - 1
    return low


def _per_machine(tensor: int, pipeline: int) -> int:
    """GPUs one machine must hold: a tensor-parallel group, or a whole node per pipeline stage."""
    return tensor if pipeline == 1 else GPUS_PER_NODE


def _inference_layout(plan: Plan, instance: _Instance) -> tuple[int, int, list[str]]:
    """(replicas, batch per replica, missed targets) for one model instance shape."""
    workload = plan.inference.workload
    target_tpot = workload.max_tpot_ms
    capacity = instance.capacity

    def tpot_ok(batch: int) -> bool:
        return target_tpot is None or instance.speed.step(batch, "expected")[0] * 1e3 <= target_tpot

    unmet: list[str] = []
    # Without a latency target every batch passes: the search would end at the capacity.
    best_batch = capacity if target_tpot is None else _largest_batch(capacity, tpot_ok)
    if best_batch == 0:
        unmet.append("max_tpot_ms")
        best_batch = 1
    if workload.max_ttft_ms and instance.speed.point(1, "expected").ttft_s * 1e3 > workload.max_ttft_ms:
        unmet.append("max_ttft_ms")

    replicas, batch = 1, best_batch
    if workload.concurrency:
        replicas = math.ceil(workload.concurrency / best_batch)
        batch = math.ceil(workload.concurrency / replicas)
    if workload.requests_per_second:
        per_replica = instance.speed.point(best_batch, "expected").requests_per_s
        replicas = max(replicas, math.ceil(workload.requests_per_second / per_replica))
        needed = workload.requests_per_second / replicas
        low_batch = _largest_batch(capacity, lambda b: instance.speed.point(b, "expected").requests_per_s < needed) + 1
        batch = max(min(low_batch, best_batch), math.ceil((workload.concurrency or 0) / replicas))
    return replicas, batch, unmet


def _plan_inference(plan: Plan, gpu: Gpu) -> Candidate:
    workload = plan.resolved.workload
    model = plan.resolved.model
    assert isinstance(workload, InferenceWorkload) and isinstance(model, LlmModel)
    assert workload.precision is not None and workload.kv_cache_precision is not None
    _precision_check(gpu, workload.precision)
    usable, shapes = _inference_shapes(plan, gpu)
    fixed = plan.fixed_count

    chosen: tuple[_Instance, int, int, list[str]] | None = None
    for tensor, pipeline, shape in shapes:
        # Built one at a time: the first shape that meets every target ends the search.
        instance = _Instance(plan, gpu, tensor, pipeline, shape.memory(usable))
        replicas, batch, unmet = _inference_layout(plan, instance)
        if fixed is not None:
            replicas = max(1, fixed // instance.gpus)
            batch = math.ceil(workload.concurrency / replicas) if workload.concurrency else batch
        chosen = (instance, replicas, batch, unmet)
        if not unmet:
            break
    assert chosen is not None
    instance, replicas, batch, unmet = chosen
    unmet = list(unmet)

    gpus = fixed if fixed is not None else replicas * instance.gpus
    rental = _rental(plan, gpu, gpus, _per_machine(instance.tensor, instance.pipeline))
    if rental is not None and fixed is None:
        gpus = rental.gpus
        replicas = gpus // instance.gpus
        if workload.concurrency:
            batch = math.ceil(workload.concurrency / replicas)
    nodes = _nodes(rental, gpus)
    _check_limits(plan, gpus, nodes)

    capacity = instance.capacity
    if batch > capacity:
        batch = capacity
    in_flight = replicas * batch
    points = {s: instance.speed.point(batch, s) for s in SCENARIOS}
    expected = points["expected"]
    if workload.concurrency and replicas * capacity < workload.concurrency:
        unmet.append("concurrency")
    if workload.requests_per_second and replicas * expected.requests_per_s < workload.requests_per_second * 0.999:
        unmet.append("requests_per_second")
    if workload.max_tpot_ms and expected.tpot_s * 1e3 > workload.max_tpot_ms and "max_tpot_ms" not in unmet:
        unmet.append("max_tpot_ms")

    performance = PerformanceEstimate(
        tokens_per_second=_range({s: p.tokens_per_s * replicas for s, p in points.items()}),
        tokens_per_second_per_gpu=_range({s: p.tokens_per_s * replicas / gpus for s, p in points.items()}),
        ttft_ms=_range({s: p.ttft_s * 1e3 for s, p in points.items()}),
        tpot_ms=_range({s: p.tpot_s * 1e3 for s, p in points.items()}),
        concurrency=Range(expected=in_flight, low=in_flight, high=in_flight),
        bound=expected.bound,
    )
    mem = instance.memory
    kv_total = batch * mem.kv_bytes_per_sequence * instance.gpus * replicas
    weights_total = mem.weights_bytes * instance.gpus * replicas
    reserve_total = mem.reserve_bytes * gpus
    capacity_total = mem.usable_bytes * gpus
    required = weights_total + kv_total + reserve_total
    memory = MemoryUse(
        capacity_gb=_round(capacity_total / GB),
        required_gb=_round(required / GB),
        weights_gb=_round(weights_total / GB),
        kv_cache_gb=_round(kv_total / GB),
        headroom_pct=round(100 * (capacity_total - required) / capacity_total, 1),
        max_concurrency=replicas * capacity,
    )
    candidate = Candidate(
        gpu=gpu,
        gpu_count=gpus,
        nodes=nodes,
        parallelism=Parallelism(tensor=instance.tensor, pipeline=instance.pipeline, data=replicas),
        rental=rental,
        memory=memory,
        performance=performance,
        unmet=unmet,
        perf_value=expected.tokens_per_s * replicas,
    )
    weights_gb = weights_bytes(model, workload.precision) / GB
    if instance.gpus == 1:
        candidate.reasons.append(plan.say("fits_one_gpu", gpu=gpu.name, weights_gb=weights_gb))
    elif instance.pipeline > 1:
        candidate.reasons.append(plan.say("pipeline_nodes", nodes=instance.pipeline, pp=instance.pipeline))
    elif (instance.tensor, instance.pipeline) == shapes[0][:2] or unmet:
        candidate.reasons.append(plan.say("tensor_parallel", tp=instance.tensor, weights_gb=weights_gb))
    else:
        candidate.reasons.append(plan.say("tensor_parallel_latency", tp=instance.tensor))
    if replicas > 1:
        candidate.reasons.append(plan.say("replicas", replicas=replicas, concurrency=in_flight))
    if instance.tensor > 1 and not gpu.has_nvlink and gpu.interconnect.kind == "pcie":
        candidate.warnings.append(plan.say("no_nvlink_inference", gpu=gpu.name))
    if workload.concurrency and replicas * capacity < workload.concurrency:
        candidate.warnings.append(plan.say("queueing", capacity=replicas * capacity, concurrency=workload.concurrency))
    if instance.pipeline > 1 and model.params_b > 100:
        candidate.warnings.append(plan.say("infiniband"))
    if workload.precision in ("bf16",) and not gpu.tflops.bf16:
        candidate.warnings.append(plan.say("fp16_for_bf16", gpu=gpu.name))
    if workload.precision in WEIGHT_ONLY and not (workload.precision == "fp4" and gpu.supports_fp4):
        candidate.warnings.append(plan.say("weight_only", gpu=gpu.name, precision=workload.precision.upper()))
    candidate.assumptions = _inference_assumptions(plan, gpu, instance, batch)
    return candidate


def _inference_assumptions(plan: Plan, gpu: Gpu, instance: _Instance, batch: int) -> list[Assumption]:
    workload = plan.resolved.workload
    model = plan.resolved.model
    assert isinstance(workload, InferenceWorkload) and isinstance(model, LlmModel)
    mbu = factor(gpu, "decode_mbu_moe" if model.moe else "decode_mbu_dense")
    mfu = factor(gpu, "prefill_mfu")
    floor = factor(gpu, "step_floor_us_moe" if model.moe else "step_floor_us_dense")
    weights, kv_cache, sequence = plan.inference.request_assumptions
    items = [
        weights,
        kv_cache,
        Assumption(
            name="gpu_memory_utilization",
            value=f"{GPU_MEMORY_UTILIZATION:g} of {usable_memory_bytes(gpu) / GIB:.1f} GiB usable per GPU "
            "(datasheet GB of HBM are GiB; results are in GB of 1e9 bytes)",
            source="perf-model.md section 1",
        ),
        sequence,
        Assumption(
            name="batch",
            value=f"{batch} sequences per model copy (engine cap {MAX_BATCH})",
            source="request or largest that fits",
        ),
        Assumption(name="decode_mbu", value=mbu.describe(), source=mbu.source),
        Assumption(name="prefill_mfu", value=mfu.describe(), source=mfu.source),
        Assumption(name="step_floor_us_per_layer", value=floor.describe(), source=floor.source),
    ]
    if instance.tensor > 1:
        items.append(
            Assumption(
                name="tensor_parallel",
                value=f"{instance.tensor} GPUs over {gpu.interconnect.kind}",
                source="perf-model.md section 2",
            )
        )
    if workload.precision in WEIGHT_ONLY:
        items.append(Assumption(name="weight_only_decode", value=W4_DECODE.describe(), source=W4_DECODE.source))
    return items


# ---------------------------------------------------------------- training and fine-tuning


def _training_counts(plan: Plan) -> list[int]:
    if plan.fixed_count is not None:
        return [plan.fixed_count]
    nodes = 1 if plan.constraints.single_node else plan.constraints.max_nodes
    limit = min(plan.constraints.max_gpus, nodes * GPUS_PER_NODE)
    counts, n = [1, 2, 4], GPUS_PER_NODE
    while n <= limit:
        counts.append(n)
        n *= 2
    return [c for c in counts if c <= limit] or [1]


class _TrainingLayout(NamedTuple):
    gpus: int
    tensor: int
    recompute_layers: int
    hours: float


class _TrainingSizing:
    """A training request's memory figures that do not depend on the GPU, and its fitting layouts by GPU memory.

    Training memory depends on the GPU only through the memory it may fill, so GPUs with equal memory share the
    layouts found for the first of them.
    """

    def __init__(self, plan: Plan, model: LlmModel, workload: TrainingWorkload | FineTuningWorkload) -> None:
        self.counts = _training_counts(plan)
        self.target_hours, self.target_name = _target_hours(workload)
        self.model = model
        self.workload = workload
        self.method = workload.method if isinstance(workload, FineTuningWorkload) else "full"
        self.states = TrainingStates.of(
            model,
            method=self.method,
            optimizer=workload.optimizer,
            lora_rank=workload.lora_rank if isinstance(workload, FineTuningWorkload) else 16,
        )
        self.activations = Activations(model, workload.sequence_length)
        self._sharding: dict[int, list[tuple[int, float, float]]] = {}
        self._shapes: dict[tuple[float, int], list[tuple[int, int]]] = {}
        self._first: dict[float, int | None] = {}
        self._speeds: dict[tuple[str, Scenario], TrainingSpeed] = {}

    @cached_property
    def one_gpu_bytes(self) -> float:
        """What one GPU would hold with every layer recomputed (training_memory's, with its default LoRA rank)."""
        states = TrainingStates.of(self.model, method=self.method, optimizer=self.workload.optimizer)
        return states.weights_bytes(1, 1) + states.optimizer_bytes(1) + self.activations.bytes(1, self.model.layers)

    def speed(self, gpu: Gpu, scenario: Scenario) -> TrainingSpeed:
        """How fast the workload trains on this GPU in a scenario, for any layout."""
        speed = self._speeds.get((gpu.id, scenario))
        if speed is None:
            speed = self._speeds[(gpu.id, scenario)] = TrainingSpeed(
                self.model,
                gpu,
                method=self.method,
                precision=self.workload.precision,
                train_tokens=self.workload.train_tokens,
                sequence_length=self.workload.sequence_length,
                scenario=scenario,
            )
        return speed

    def first_fitting(self, usable_bytes: float) -> int | None:
        """Index in `counts` of the fewest GPUs with a layout that fits in `usable_bytes` each; None if none does."""
        if usable_bytes not in self._first:
            self._first[usable_bytes] = next(
                (i for i, gpus in enumerate(self.counts) if self.shapes(usable_bytes, gpus)), None
            )
        return self._first[usable_bytes]

    def machine_sizes(self, first: int) -> set[int]:
        """GPUs per machine the layouts from counts[first] on need."""
        return {min(gpus, GPUS_PER_NODE) for gpus in self.counts[first:]}

    def shapes(self, usable_bytes: float, gpus: int) -> list[tuple[int, int]]:
        """(tensor parallel, recomputed layers) of every layout of `gpus` GPUs that fits in `usable_bytes` each."""
        key = (usable_bytes, gpus)
        shapes = self._shapes.get(key)
        if shapes is None:
            shapes = self._shapes[key] = self._fitting(usable_bytes, gpus)
        return shapes

    def _fitting(self, usable_bytes: float, gpus: int) -> list[tuple[int, int]]:
        shapes = []
        for tensor, weights, optimizer in self._sharded(gpus):
            recompute_layers = self.activations.recompute_layers_needed(usable_bytes - weights - optimizer, tensor)
            if recompute_layers <= self.model.layers:
                shapes.append((tensor, recompute_layers))
        return shapes

    def _sharded(self, gpus: int) -> list[tuple[int, float, float]]:
        """(tensor parallel, weights, optimizer states) per GPU for every tensor-parallel size `gpus` GPUs allow."""
        sharded = self._sharding.get(gpus)
        if sharded is None:
            sharded = self._sharding[gpus] = [
                (tensor, self.states.weights_bytes(gpus, tensor), self.states.optimizer_bytes(gpus))
                for tensor in TENSOR_PARALLEL
                if tensor <= min(gpus, GPUS_PER_NODE) and not gpus % tensor and not self.model.attention_heads % tensor
            ]
        return sharded

    def memory(self, usable_bytes: float, gpus: int, tensor: int, recompute_layers: int) -> TrainingMemory:
        """Per-GPU memory of one layout (what `training_memory` gives for it)."""
        return TrainingMemory(
            usable_bytes=usable_bytes,
            weights_bytes=self.states.weights_bytes(gpus, tensor),
            optimizer_bytes=self.states.optimizer_bytes(gpus),
            activations_bytes=self.activations.bytes(tensor, recompute_layers),
        )


def _training_layout(plan: Plan, usable: float, speed: TrainingSpeed, gpus: int) -> _TrainingLayout | None:
    """The fastest layout of `gpus` GPUs that fits in `usable` bytes each (the first on equal hours); None if none
    fits."""
    best: _TrainingLayout | None = None
    for tensor, recompute_layers in plan.training.shapes(usable, gpus):
        hours = speed.hours(gpus, tensor, GPUS_PER_NODE, recompute_layers)
        if best is None or hours < best.hours:
            best = _TrainingLayout(gpus, tensor, recompute_layers, hours)
    return best


def _target_hours(workload: TrainingWorkload | FineTuningWorkload) -> tuple[float | None, str]:
    if isinstance(workload, TrainingWorkload):
        return (workload.target_days * 24 if workload.target_days else None), "target_days"
    return workload.target_hours, "target_hours"


def _plan_training(plan: Plan, gpu: Gpu) -> Candidate:
    workload = plan.resolved.workload
    model = plan.resolved.model
    assert isinstance(workload, TrainingWorkload | FineTuningWorkload) and isinstance(model, LlmModel)
    _precision_check(gpu, workload.precision)
    sizing = plan.training
    target, target_name = sizing.target_hours, sizing.target_name
    usable = training_usable_bytes(gpu)
    first = sizing.first_fitting(usable)
    if first is None:
        raise Excluded("does_not_fit", gpus=sizing.counts[-1], needed_gb=sizing.one_gpu_bytes / GB)
    counts = sizing.counts[first:]
    _require_renter(plan, gpu)
    _require_host(plan, gpu, sizing.machine_sizes(first))
    expected = sizing.speed(gpu, "expected")
    layout: _TrainingLayout | None = None
    for gpus in counts:
        found = _training_layout(plan, usable, expected, gpus)
        if found is None:
            continue
        layout = found
        if target is None or found.hours <= target:
            break
    assert layout is not None

    per_machine = min(layout.gpus, GPUS_PER_NODE)
    rental = _rental(plan, gpu, layout.gpus, per_machine)
    if rental is not None and rental.gpus != layout.gpus and plan.fixed_count is None:
        layout = _training_layout(plan, usable, expected, rental.gpus) or layout
    gpus = layout.gpus
    nodes = _nodes(rental, gpus)
    _check_limits(plan, gpus, nodes)

    runs = {s: sizing.speed(gpu, s).run(gpus, layout.tensor, GPUS_PER_NODE, layout.recompute_layers) for s in SCENARIOS}
    unmet = [target_name] if target is not None and runs["expected"].hours > target else []
    mem = sizing.memory(usable, gpus, layout.tensor, layout.recompute_layers)
    capacity = mem.usable_bytes * gpus
    required = mem.required_bytes * gpus
    candidate = Candidate(
        gpu=gpu,
        gpu_count=gpus,
        nodes=nodes,
        parallelism=Parallelism(tensor=layout.tensor, pipeline=1, data=gpus // layout.tensor),
        rental=rental,
        memory=MemoryUse(
            capacity_gb=_round(capacity / GB),
            required_gb=_round(required / GB),
            weights_gb=_round(mem.weights_bytes * gpus / GB),
            activations_gb=_round(mem.activations_bytes * gpus / GB),
            optimizer_gb=_round(mem.optimizer_bytes * gpus / GB),
            headroom_pct=round(100 * (capacity - required) / capacity, 1),
        ),
        performance=PerformanceEstimate(
            tokens_per_second=_range({s: r.tokens_per_s for s, r in runs.items()}),
            tokens_per_second_per_gpu=_range({s: r.tokens_per_s / gpus for s, r in runs.items()}),
            run_hours=_range({s: r.hours for s, r in runs.items()}),
            bound=runs["expected"].bound,
        ),
        unmet=unmet,
        perf_value=1.0 / runs["expected"].hours,
    )
    tp_text = recompute_text = ""
    if layout.tensor > 1:
        tp_text = f", tensor parallel {layout.tensor}" if plan.lang == "en" else f"，张量并行 {layout.tensor}"
    if layout.recompute_layers:
        recompute_text = (
            f", activations of {layout.recompute_layers} of {model.layers} layers recomputed"
            if plan.lang == "en"
            else f"，{model.layers} 层中 {layout.recompute_layers} 层激活重计算"
        )
    candidate.reasons.append(plan.say("training_layout", gpus=gpus, tp_text=tp_text, recompute_text=recompute_text))
    if gpus > 1 and gpu.interconnect.kind in ("pcie", "nvlink_bridge"):
        candidate.warnings.append(plan.say("no_nvlink_training", gpu=gpu.name))
    if nodes > 1 and model.params_b > 100:
        candidate.warnings.append(plan.say("infiniband"))
    if runs["expected"].hours > 24 * 60:
        candidate.warnings.append(plan.say("long_run", days=runs["expected"].hours / 24))
    if workload.precision == "bf16" and not gpu.tflops.bf16:
        candidate.warnings.append(plan.say("fp16_for_bf16", gpu=gpu.name))
    mfu = factor(gpu, "train_mfu")
    per_token = training_flops_per_token(model, workload.sequence_length)
    candidate.assumptions = [
        Assumption(
            name="compute",
            value=f"6ND + attention = {per_token:.3g} FLOP per token"
            + (
                f", x{1 + layout.recompute_layers / (3 * model.layers):.2f} for recomputed layers"
                if layout.recompute_layers
                else ""
            ),
            source="perf-model.md section 3",
        ),
        Assumption(name="train_mfu", value=mfu.describe(), source=mfu.source),
        Assumption(
            name="sharding",
            value=f"ZeRO-3 over {gpus} GPUs, tensor parallel {layout.tensor}, "
            f"micro-batch 1 x {workload.sequence_length} tokens",
            source="perf-model.md section 3",
        ),
        Assumption(
            name="optimizer_states",
            value=f"{workload.optimizer}: {16 if workload.optimizer == 'adamw' else 10} bytes per trainable parameter",
            source="perf-model.md section 3",
        ),
    ]
    if nodes > 1:
        candidate.assumptions.append(
            Assumption(
                name="inter_node_bandwidth",
                value=f"{INTER_NODE_GBPS.describe()} GB/s per GPU",
                source=INTER_NODE_GBPS.source,
            )
        )
    return candidate


# ---------------------------------------------------------------- image generation


def _plan_images(plan: Plan, gpu: Gpu) -> Candidate:
    workload = plan.resolved.workload
    model = plan.resolved.model
    assert isinstance(workload, ImageGenerationWorkload) and isinstance(model, DiffusionModel)
    assert workload.steps is not None and workload.width is not None and workload.height is not None
    _precision_check(gpu, workload.precision)
    pipeline, tflop = plan.images
    memory = pipeline.memory(usable_memory_bytes(gpu))
    if not memory.fits:
        raise Excluded("does_not_fit", gpus=1, needed_gb=memory.required_bytes / GB)
    _require_renter(plan, gpu)
    seconds = {s: seconds_per_image(tflop, gpu, workload.precision, s) for s in SCENARIOS}
    per_gpu = 3600.0 / seconds["expected"]
    gpus = plan.fixed_count or (math.ceil(workload.images_per_hour / per_gpu) if workload.images_per_hour else 1)
    rental = _rental(plan, gpu, gpus, 1)
    if rental is not None and plan.fixed_count is None:
        gpus = rental.gpus
    nodes = _nodes(rental, gpus)
    _check_limits(plan, gpus, nodes)
    total = {s: 3600.0 / t * gpus for s, t in seconds.items()}
    unmet = ["images_per_hour"] if workload.images_per_hour and total["expected"] < workload.images_per_hour else []
    capacity = memory.usable_bytes * gpus
    required = memory.required_bytes * gpus
    candidate = Candidate(
        gpu=gpu,
        gpu_count=gpus,
        nodes=nodes,
        parallelism=Parallelism(tensor=1, pipeline=1, data=gpus),
        rental=rental,
        memory=MemoryUse(
            capacity_gb=_round(capacity / GB),
            required_gb=_round(required / GB),
            weights_gb=_round(memory.weights_bytes * gpus / GB),
            activations_gb=_round(memory.activations_bytes * gpus / GB),
            headroom_pct=round(100 * (capacity - required) / capacity, 1),
        ),
        performance=PerformanceEstimate(images_per_hour=_range(total), bound="compute"),
        unmet=unmet,
        perf_value=total["expected"],
    )
    candidate.reasons.append(plan.say("images_per_gpu", per_gpu=per_gpu))
    mfu = factor(gpu, "diffusion_mfu")
    flops = image_tflop(model, workload.width, workload.height, workload.steps)
    candidate.assumptions = [
        Assumption(
            name="image_tflop",
            value=f"{flops:.0f} TFLOP per image ({workload.steps} steps x "
            f"{model.passes_per_step} passes, {workload.width}x{workload.height}, VAE decode)",
            source="models.md; perf-model.md section 4",
        ),
        Assumption(name="diffusion_mfu", value=mfu.describe(), source=mfu.source),
        Assumption(name="batch", value="1 image at a time per GPU (compute-bound)", source="perf-model.md section 4"),
    ]
    return candidate


PLANNERS: dict[str, Callable[[Plan, Gpu], Candidate]] = {
    "inference": _plan_inference,
    "training": _plan_training,
    "fine_tuning": _plan_training,
    "image_generation": _plan_images,
}


# ---------------------------------------------------------------- costs, scores, options


def _cost(plan: Plan, candidate: Candidate, money: Money) -> Cost | None:
    rental = candidate.rental
    if rental is None:
        return None
    hourly = rental.usd_per_hour
    performance = candidate.performance
    unit: dict[str, float] = {}
    if plan.kind == "inference" and performance.tokens_per_second:
        candidate.unit_cost_usd = per_million_tokens(hourly, performance.tokens_per_second.expected)
        unit["per_million_tokens"] = candidate.unit_cost_usd
    elif plan.kind in ("training", "fine_tuning") and performance.run_hours:
        candidate.unit_cost_usd = per_run(hourly, performance.run_hours.expected)
        unit["per_run"] = candidate.unit_cost_usd
    elif performance.images_per_hour:
        candidate.unit_cost_usd = per_1000_images(hourly, performance.images_per_hour.expected)
        unit["per_1000_images"] = candidate.unit_cost_usd
    scale = money.factor
    return Cost(
        currency=money.currency,
        hourly=round(hourly * scale, 2),
        monthly=round(hourly * HOURS_PER_MONTH * scale, 2),
        **{name: _round(value * scale) for name, value in unit.items()},
        stale_price=is_stale(rental.offer, plan.today, plan.price_max_age_days),
        price_age_days=rental.age_days(plan.today),
    )


def _scores(plan: Plan, candidates: Sequence[Candidate]) -> list[ScoreBreakdown]:
    best_perf = max((c.perf_value for c in candidates), default=0.0) or 1.0
    costs = [c.unit_cost_usd for c in candidates if c.unit_cost_usd]
    cheapest = min(costs) if costs else None
    ecosystem = ECOSYSTEM_SCORE["training" if plan.kind == "fine_tuning" else plan.kind]
    breakdowns = []
    for c in candidates:
        multi_gpu = c.gpu_count > 1
        breakdowns.append(
            ScoreBreakdown(
                performance=round(c.perf_value / best_perf, 4),
                cost=round(cheapest / c.unit_cost_usd, 4) if cheapest and c.unit_cost_usd else 0.0,
                fit=round(min(1.0, max(0.0, c.memory.headroom_pct) / 40.0), 4),
                ecosystem=ecosystem[c.gpu.ecosystem],
                # A single GPU needs no link; more GPUs score their interconnect.
                scalability=SCALABILITY_SCORE[c.gpu.interconnect.kind] if multi_gpu else 1.0,
            )
        )
    return breakdowns


def _total(breakdown: ScoreBreakdown, objective: Objective) -> float:
    weights = WEIGHTS[objective]
    return round(sum(weights[name] * getattr(breakdown, name) for name in weights), 4)


def _tco_hint(plan: Plan, candidate: Candidate, money: Money) -> TcoHint | None:
    """Serving runs around the clock: set a month of rent against a month of owning the same GPUs."""
    if plan.kind != "inference" or candidate.rental is None:
        return None
    owned = owned_monthly_usd(plan.catalog, candidate.gpu, candidate.gpu_count, plan.today, plan.lang)
    if owned is None:
        return None
    monthly_owned, inputs, warnings = owned
    monthly_rent = candidate.rental.usd_per_hour * HOURS_PER_MONTH
    return TcoHint(
        currency=money.currency,
        monthly_rent=round(monthly_rent * money.factor, 2),
        monthly_owned=round(monthly_owned * money.factor, 2),
        cheaper="buy" if monthly_owned < monthly_rent else "rent",
        years=inputs.years,
        purchase_usd=round(inputs.purchase_usd, 2),
        basis=(
            f"owning amortised over {inputs.years} years at 100% utilisation with POST /v1/tco's defaults "
            f"(PUE {inputs.pue:g}, {inputs.electricity_usd_per_kwh:g} USD/kWh, resale {inputs.resale_fraction:g}, "
            f"cost of capital {inputs.cost_of_capital:g}, operations {inputs.operations_usd_per_year:,.0f} USD/year)"
        ),
        warnings=warnings,
    )


def _option(
    plan: Plan,
    candidate: Candidate,
    rank: int,
    breakdown: ScoreBreakdown,
    cost: Cost | None,
    objective: Objective,
    money: Money,
) -> Option:
    rental = candidate.rental
    # Built here, not by the planners' callers: only the options returned need their text.
    reasons, warnings = _common_notes(plan, candidate)
    if candidate.unmet:
        warnings.append(plan.say("misses", targets=target_names(candidate.unmet, plan.lang)))
    return Option(
        rank=rank,
        feasible=True,
        gpu=GpuSummary(id=candidate.gpu.id, name=candidate.gpu.name, vendor=candidate.gpu.vendor),
        gpu_count=candidate.gpu_count,
        nodes=candidate.nodes,
        parallelism=candidate.parallelism,
        offer=None
        if rental is None
        else OfferUsed(
            offer_id=rental.offer.id,
            provider=rental.offer.provider,
            pricing=rental.offer.pricing,
            usd_per_gpu_hour=rental.offer.usd_per_gpu_hour,
            gpus_per_instance=rental.offer.gpus_per_instance,
            instances=rental.instances,
            as_of=rental.offer.as_of,
            age_days=rental.age_days(plan.today),
            source=rental.offer.source,
        ),
        cost=cost,
        memory=candidate.memory,
        performance=candidate.performance,
        meets_targets=not candidate.unmet,
        unmet_targets=candidate.unmet,
        score=_total(breakdown, objective),
        score_breakdown=breakdown,
        confidence=confidence(candidate.gpu, plan.kind),
        assumptions=candidate.assumptions + user_price_assumption(rental.offer if rental else None),
        reasons=candidate.reasons + reasons,
        warnings=candidate.warnings + warnings,
        tco=_tco_hint(plan, candidate, money),
    )


# ---------------------------------------------------------------- requests


def _resolve_names(catalog: Catalog, names: Sequence[str] | None, field_name: str) -> set[str] | None:
    if names is None:
        return None
    ids = set()
    for name in names:
        gpu = catalog.gpu(name)
        if gpu is None:
            raise unknown_name(catalog, "gpu", name, field_name)
        ids.add(gpu.id)
    return ids


def _filter_reason(
    plan: Plan, gpu: Gpu, allowed: frozenset[str] | None, excluded: frozenset[str] | None
) -> Exclusion | None:
    limits = plan.constraints
    code, figures = "", dict[str, str]()
    if allowed is not None and gpu.id not in allowed:
        code = "not_allowed"
    elif excluded is not None and gpu.id in excluded:
        code = "excluded_by_request"
    elif limits.vendors is not None and gpu.vendor not in limits.vendors:
        code, figures = "vendor_excluded", {"vendor": gpu.vendor}
    elif limits.ecosystems is not None and gpu.ecosystem not in limits.ecosystems:
        code, figures = "ecosystem_excluded", {"ecosystem": gpu.ecosystem}
    if not code:
        return None
    return Exclusion(gpu=gpu.id, code=code, reason=plan.say(code, **figures))


def _requirements(plan: Plan) -> Requirements:
    workload, model = plan.resolved.workload, plan.resolved.model
    if isinstance(workload, InferenceWorkload):
        assert isinstance(model, LlmModel) and workload.precision and workload.kv_cache_precision
        weights = weights_bytes(model, workload.precision)
        kv = kv_bytes_per_sequence(model, workload.kv_cache_precision, workload.input_tokens + workload.output_tokens)
        return Requirements(
            weights_gb=_round(weights / GB),
            kv_cache_gb_per_request=_round(kv / GB),
            min_memory_gb=_round((weights + kv + runtime_reserve_bytes(model)) / GB),
            flops_per_token=_round(2.0 * (model.active_params_b or model.params_b) * 1e9),
        )
    if isinstance(workload, ImageGenerationWorkload):
        assert isinstance(model, DiffusionModel) and workload.steps and workload.width and workload.height
        memory = diffusion_memory(model, plan.catalog.gpus[0], workload.precision, workload.width, workload.height)
        flops = image_tflop(model, workload.width, workload.height, workload.steps) * 1e12
        return Requirements(
            weights_gb=_round(memory.weights_bytes / GB),
            min_memory_gb=_round(memory.required_bytes / GB),
            flops_per_image=_round(flops),
        )
    assert isinstance(model, LlmModel)
    method = workload.method if isinstance(workload, FineTuningWorkload) else "full"
    per_token = training_flops_per_token(model, workload.sequence_length)
    one_gpu = training_memory(
        model,
        plan.catalog.gpus[0],  # required bytes do not depend on the GPU
        method=method,
        optimizer=workload.optimizer,
        sequence_length=workload.sequence_length,
        gpus=1,
        tensor_parallel=1,
        recompute_layers=model.layers,
        lora_rank=workload.lora_rank if isinstance(workload, FineTuningWorkload) else 16,
    )
    return Requirements(
        weights_gb=_round(model.params_b * BYTES_PER_PARAM["nf4" if method == "qlora" else "bf16"]),
        min_memory_gb=_round(one_gpu.required_bytes / GB),
        total_flops=_round(per_token * workload.train_tokens),
        flops_per_token=_round(per_token),
    )


def recommendation_id(
    request: RecommendationRequest, catalog_version: str, rate: ExchangeRate | None, day: date
) -> str:
    """Content address: the same normalised request on the same catalog, rate and day gives the same id.

    The day is part of it because answers state how old each price is.
    """
    converted = (rate.usd_to_cny, rate.as_of) if rate is not None else None
    digest = hashlib.sha256(msgspec.json.encode([request, catalog_version, converted, day]))
    return "rec_" + digest.hexdigest()[:24]


@dataclass(frozen=True)
class PreparedRequest:
    """A request with every default filled and every name checked: what the id is computed from."""

    request: RecommendationRequest
    resolved: Resolved
    constraints: Constraints
    allowed: frozenset[str] | None
    denied: frozenset[str] | None


def prepare(catalog: Catalog, request: RecommendationRequest, lang: Lang) -> PreparedRequest:
    """Normalise a request (equal meaning gives equal ids) and reject what no GPU could fix."""
    resolved = normalise(request.workload, catalog)
    given = request.constraints or Constraints()
    allowed = _resolve_names(catalog, given.gpus, "constraints.gpus")
    denied = _resolve_names(catalog, given.exclude_gpus, "constraints.exclude_gpus")
    check_providers(catalog, given.providers, "constraints.providers")

    def canonical(values: Iterable[str] | None) -> list[Any] | None:
        # Order, repetition and aliases do not change the question, so they must not change the id.
        return sorted(set(values)) if values is not None else None

    constraints = msgspec.structs.replace(
        given,
        gpus=canonical(allowed),
        exclude_gpus=canonical(denied),
        vendors=canonical(given.vendors),
        ecosystems=canonical(given.ecosystems),
        providers=canonical(given.providers),
        pricing=canonical(given.pricing or DEFAULT_PRICING),
        prices=resolve_prices(catalog, given.prices, "constraints.prices"),
    )
    normalised = msgspec.structs.replace(request, workload=resolved.workload, constraints=constraints, lang=lang)
    return PreparedRequest(
        request=normalised,
        resolved=resolved,
        constraints=constraints,
        allowed=frozenset(allowed) if allowed is not None else None,
        denied=frozenset(denied) if denied is not None else None,
    )


def recommend(
    catalog: Catalog, request: RecommendationRequest, *, now: datetime, lang: Lang, rate: ExchangeRate
) -> Recommendation:
    """Every GPU allowed by the constraints in its smallest suitable configuration, ranked, with exclusions."""
    return rank(catalog, prepare(catalog, request, lang), now=now, rate=rate)


def rank(
    catalog: Catalog,
    prepared: PreparedRequest,
    *,
    now: datetime,
    rate: ExchangeRate,
    price_max_age_days: int = DEFAULT_PRICE_MAX_AGE_DAYS,
) -> Recommendation:
    """The ranking of a prepared request."""
    normalised, constraints = prepared.request, prepared.constraints
    lang: Lang = normalised.lang or "en"
    allowed, denied = prepared.allowed, prepared.denied
    plan = Plan(
        catalog=catalog,
        resolved=prepared.resolved,
        constraints=constraints,
        lang=lang,
        today=now.date(),
        price_max_age_days=price_max_age_days,
    )
    money = Money(currency=normalised.currency, rate=rate)
    candidates: list[Candidate] = []
    costs: list[Cost | None] = []
    excluded: list[Exclusion] = []
    planner = PLANNERS[plan.kind]
    filtering = any(names is not None for names in (allowed, denied, constraints.vendors, constraints.ecosystems))
    for gpu in catalog.gpus:
        filtered = _filter_reason(plan, gpu, allowed, denied) if filtering else None
        if filtered is not None:
            excluded.append(filtered)
            continue
        try:
            candidate = planner(plan, gpu)
        except Excluded as reason:
            excluded.append(Exclusion(gpu=gpu.id, code=reason.code, reason=plan.say(reason.code, **reason.figures)))
            continue
        cost = _cost(plan, candidate, money)
        if (
            constraints.max_usd_per_hour is not None
            and candidate.rental is not None
            and candidate.rental.usd_per_hour > constraints.max_usd_per_hour
        ):
            excluded.append(
                Exclusion(
                    gpu=gpu.id,
                    code="over_budget",
                    reason=plan.say(
                        "over_budget", hourly=candidate.rental.usd_per_hour, limit=constraints.max_usd_per_hour
                    ),
                )
            )
            continue
        candidates.append(candidate)
        costs.append(cost)

    breakdowns = _scores(plan, candidates)
    totals = [_total(breakdown, normalised.objective) for breakdown in breakdowns]
    order = sorted(
        range(len(candidates)),
        key=lambda i: (
            bool(candidates[i].unmet),
            bool(costs[i] is not None and costs[i].stale_price),  # type: ignore[union-attr]
            -totals[i],
            candidates[i].unit_cost_usd if candidates[i].unit_cost_usd is not None else math.inf,
            candidates[i].gpu.id,
        ),
    )
    options = []
    for rank, index in enumerate(order, start=1):
        candidate = candidates[index]
        if rank > normalised.limit:
            excluded.append(
                Exclusion(
                    gpu=candidate.gpu.id,
                    code="below_limit",
                    reason=plan.say("below_limit", rank=rank, limit=normalised.limit),
                )
            )
            continue
        options.append(_option(plan, candidate, rank, breakdowns[index], costs[index], normalised.objective, money))
    excluded.sort(key=lambda e: e.gpu)
    rate_used = rate if normalised.currency == "CNY" else None
    return Recommendation(
        id=recommendation_id(normalised, catalog.version, rate_used, now.date()),
        created_at=now.isoformat(),
        catalog_version=catalog.version,
        workload=normalised.workload,
        constraints=constraints,
        objective=normalised.objective,
        currency=normalised.currency,
        exchange_rate=rate_used,
        lang=lang,
        requirements=msgspec.structs.replace(
            _requirements(plan),
            stale_offers=stale_count(
                (o for gpu in catalog.gpus for o in plan.offers(gpu)), plan.today, plan.price_max_age_days
            ),
        ),
        options=options,
        excluded=excluded,
        summary=recommendation_summary(plan.kind, options, excluded, lang),
    )


def estimate(
    catalog: Catalog,
    request: EstimateRequest,
    *,
    now: datetime,
    lang: Lang,
    rate: ExchangeRate,
    price_max_age_days: int = DEFAULT_PRICE_MAX_AGE_DAYS,
) -> Option:
    """One workload on one explicit configuration; one that cannot run answers feasible=false with the reason."""
    resolved = normalise(request.workload, catalog)
    gpu = catalog.gpu(request.gpu)
    if gpu is None:
        raise unknown_name(catalog, "gpu", request.gpu, "gpu")
    providers = [request.provider] if request.provider else None
    check_providers(catalog, providers, "provider")
    constraints = Constraints(
        providers=providers,
        pricing=[request.pricing] if request.pricing else list(DEFAULT_PRICING),
        gpu_count=request.gpu_count,
        max_gpus=request.gpu_count,
        max_nodes=512,
        require_offer=False,
    )
    plan = Plan(
        catalog=catalog,
        resolved=resolved,
        constraints=constraints,
        lang=lang,
        today=now.date(),
        price_max_age_days=price_max_age_days,
    )
    money = Money(currency=request.currency, rate=rate)
    try:
        candidate = PLANNERS[plan.kind](plan, gpu)
    except Excluded as reason:
        return _infeasible(plan, gpu, request.gpu_count, reason)
    cost = _cost(plan, candidate, money)
    breakdown = _scores(plan, [candidate])[0]
    return _option(plan, candidate, 1, breakdown, cost, "balanced", money)


def _infeasible(plan: Plan, gpu: Gpu, gpu_count: int, reason: Excluded) -> Option:
    reasons = [plan.say(reason.code, **reason.figures)]
    smallest = msgspec.structs.replace(plan.constraints, gpu_count=None, max_gpus=512, require_offer=False)
    try:
        fitting = PLANNERS[plan.kind](dataclasses.replace(plan, constraints=smallest), gpu)
        reasons.append(
            plan.say(
                "needs_at_least",
                gpus=fitting.parallelism.tensor * fitting.parallelism.pipeline
                if plan.kind == "inference"
                else fitting.gpu_count,
                gpu=gpu.name,
            )
        )
    except Excluded:
        pass
    capacity = usable_memory_bytes(gpu) * gpu_count / GB
    requirements = _requirements(plan)
    needed = requirements.min_memory_gb
    return Option(
        rank=1,
        feasible=False,
        gpu=GpuSummary(id=gpu.id, name=gpu.name, vendor=gpu.vendor),
        gpu_count=gpu_count,
        nodes=math.ceil(gpu_count / GPUS_PER_NODE),
        parallelism=Parallelism(tensor=1, pipeline=1, data=1),
        offer=None,
        cost=None,
        memory=MemoryUse(
            capacity_gb=_round(capacity),
            required_gb=_round(needed),
            weights_gb=requirements.weights_gb,
            headroom_pct=round(100 * (capacity - needed) / capacity, 1),
        ),
        performance=None,
        meets_targets=False,
        unmet_targets=[],
        score=0.0,
        score_breakdown=ScoreBreakdown(performance=0, cost=0, fit=0, ecosystem=0, scalability=0),
        confidence=confidence(gpu, plan.kind),
        assumptions=[],
        reasons=reasons,
        warnings=[],
    )
