"""What an estimate or a recommendation answers: options with ranges, costs, assumptions and reasons."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date
from typing import Annotated, Literal

import msgspec

from domain.catalog import Gpu, Offer, Pricing, Tier, Vendor
from domain.workloads.requests import Constraints, Currency, Lang, Objective, Workload


class Result(msgspec.Struct, kw_only=True, frozen=True):
    """Base of every estimate and recommendation struct."""


class Range(Result, kw_only=True, frozen=True):
    """An estimate with its band: expected from the table's expected factors, low/high from the ends of the bands."""

    expected: float
    low: float
    high: float


class FactorUsed(Result, kw_only=True, frozen=True):
    """A performance-model factor the estimate read, as it applied it."""

    name: Annotated[str, msgspec.Meta(description="The factor's name in the model's factor table.")]
    family: Annotated[
        str, msgspec.Meta(description="The GPU family whose row of the table it came from; all: no family's.")
    ]
    precision: Annotated[str, msgspec.Meta(description="The precision of the estimate it applied to.")]
    expected: Annotated[float, msgspec.Meta(description="The value the expected figures used.")]
    low: Annotated[float, msgspec.Meta(description="The low end of its band, as applied.")]
    high: Annotated[float, msgspec.Meta(description="The high end of its band, as applied.")]


class Assumption(Result, kw_only=True, frozen=True):
    """One input that produced an estimate."""

    name: str
    value: str
    source: str
    factor: Annotated[
        FactorUsed | None,
        msgspec.Meta(
            description="Where the assumption is one factor of the performance model: the factor as the estimate "
            "read it (the value stated is this one); null otherwise."
        ),
    ] = None


class GpuSummary(Result, kw_only=True, frozen=True):
    """The GPU of an option."""

    id: str
    name: str
    vendor: Vendor


class Parallelism(Result, kw_only=True, frozen=True):
    """How the GPUs split the work: tensor x pipeline per model copy, data = number of copies."""

    tensor: Annotated[int, msgspec.Meta(description="GPUs each layer is split over (tensor parallel).")]
    pipeline: Annotated[int, msgspec.Meta(description="Pipeline stages of one model copy.")]
    data: Annotated[int, msgspec.Meta(description="Model copies (data parallel replicas).")]
    expert: Annotated[
        int, msgspec.Meta(description="GPUs a MoE model's routed experts are split over (expert parallel); 1 = none.")
    ] = 1
    attention_data: (
        Annotated[
            int,
            msgspec.Meta(
                description="Inference: GPUs of each copy that run attention data-parallel (each keeps its own "
                "requests' KV cache, as SGLang's --enable-dp-attention and vLLM's --data-parallel-size with expert "
                "parallel do); null when attention is tensor-parallel."
            ),
        ]
        | None
    ) = None
    zero_stage: (
        Annotated[
            int,
            msgspec.Meta(
                description="Training: ZeRO stage of the data-parallel ranks (0 none, 1 optimizer states, 2 and "
                "gradients, 3 and weights = FSDP full shard); null for other workloads."
            ),
        ]
        | None
    ) = None
    micro_batch: (
        Annotated[int, msgspec.Meta(description="Training: sequences per micro-batch; null for other workloads.")]
        | None
    ) = None
    global_batch: (
        Annotated[int, msgspec.Meta(description="Training: sequences per optimizer step; null for other workloads.")]
        | None
    ) = None
    recompute: (
        Annotated[
            Literal["none", "partial", "full"],
            msgspec.Meta(
                description="Training: activation recomputation (none, some layers of each pipeline stage, or all "
                "of them); null for other workloads."
            ),
        ]
        | None
    ) = None
    offload: (
        Annotated[
            bool,
            msgspec.Meta(description="Training: optimizer states in host memory (ZeRO-Offload); null otherwise."),
        ]
        | None
    ) = None


class Launch(Result, kw_only=True, frozen=True):
    """How to run the option: the engine (or launcher) and its command line for this layout."""

    engine: Annotated[
        str,
        msgspec.Meta(
            description="vllm, sglang, trtllm for serving; trl (under accelerate) or megatron for fine-tuning and "
            "training; diffusers for images."
        ),
    ]
    command: Annotated[
        str,
        msgspec.Meta(
            description="The command line for this layout, ready to paste once the user's own inputs are set: "
            "$DATASET (TRL), $DATA_PREFIX and $LR (Megatron-LM), and $NODE_RANK and $HEAD_NODE on several nodes."
        ),
    ]


class OfferUsed(Result, kw_only=True, frozen=True):
    """The rental offer an option is priced with."""

    offer_id: str
    provider: str
    pricing: Pricing
    usd_per_gpu_hour: float
    gpus_per_instance: int
    instances: int
    as_of: date
    age_days: int
    source: str
    tier: Annotated[
        Tier | None,
        msgspec.Meta(description="community or secure where the provider sells both (RunPod); null otherwise."),
    ] = None


class Cost(Result, kw_only=True, frozen=True):
    """Money figures in `currency`; only the unit that fits the workload kind is set."""

    currency: Currency
    hourly: float
    monthly: float
    per_million_tokens: float | None = None
    per_run: float | None = None
    per_1000_images: float | None = None
    # The price is older than the answer may rely on (GPU_ADVISOR_PRICE_MAX_AGE_DAYS): shown, ranked after fresh ones.
    stale_price: bool = False
    price_age_days: int | None = None


class MemoryUse(Result, kw_only=True, frozen=True):
    """Memory of the whole configuration in GB (1e9 bytes)."""

    capacity_gb: float
    required_gb: float
    weights_gb: float
    kv_cache_gb: float | None = None
    activations_gb: float | None = None
    optimizer_gb: float | None = None
    headroom_pct: float
    max_concurrency: int | None = None


class PerformanceEstimate(Result, kw_only=True, frozen=True):
    """Each figure as {expected, low, high}; null where it does not apply to the workload kind."""

    tokens_per_second: Range | None = None
    tokens_per_second_per_gpu: Range | None = None
    ttft_ms: Range | None = None
    tpot_ms: Range | None = None
    concurrency: Range | None = None
    run_hours: Range | None = None
    images_per_hour: Range | None = None
    bound: Literal["memory", "compute", "interconnect"]


class ScoreBreakdown(Result, kw_only=True, frozen=True):
    """The parts of the score, each 0..1."""

    performance: float
    cost: float
    fit: float
    ecosystem: float
    scalability: float


class Option(Result, kw_only=True, frozen=True):
    """One configuration: does it fit, how fast, what it costs, and why."""

    rank: int
    feasible: bool
    gpu: GpuSummary
    gpu_count: int
    nodes: int
    parallelism: Parallelism
    offer: OfferUsed | None
    cost: Cost | None
    memory: MemoryUse
    performance: PerformanceEstimate | None
    meets_targets: bool
    unmet_targets: list[str]
    score: float
    score_breakdown: ScoreBreakdown
    confidence: Literal["calibrated", "spec_sheet"]
    assumptions: list[Assumption]
    reasons: list[str]
    warnings: list[str]
    tco: TcoHint | None = None
    layout_reason: (
        Annotated[str, msgspec.Meta(description="Why this layout and not the next best one the search found.")] | None
    ) = None
    launch: Annotated[Launch, msgspec.Meta(description="The command that runs this option.")] | None = None


class TcoHint(Result, kw_only=True, frozen=True):
    """For continuous serving: renting this configuration a month against owning it, amortised (POST /v1/tco)."""

    currency: Currency
    monthly_rent: float
    monthly_owned: float
    cheaper: Literal["buy", "rent"]
    years: int
    purchase_usd: float
    basis: str
    warnings: list[str]


class Exclusion(Result, kw_only=True, frozen=True):
    """A GPU that is not among the options, and why."""

    gpu: str
    code: str
    reason: str


class Requirements(Result, kw_only=True, frozen=True):
    """What the workload needs regardless of GPU."""

    weights_gb: float
    kv_cache_gb_per_request: float | None = None
    min_memory_gb: float
    total_flops: float | None = None
    flops_per_token: float | None = None
    flops_per_image: float | None = None
    # Allowed offers older than the price age limit (their options are flagged and ranked last).
    stale_offers: int = 0


class ExchangeRate(Result, kw_only=True, frozen=True):
    """The rate money figures were converted with."""

    usd_to_cny: float
    as_of: date
    source: str


class Recommendation(Result, kw_only=True, frozen=True):
    """Ranked options for a workload, the GPUs left out and a summary a chatbot can say."""

    id: str
    created_at: str
    catalog_version: str
    workload: Workload
    constraints: Constraints
    objective: Objective
    currency: Currency
    exchange_rate: ExchangeRate | None
    lang: Lang
    requirements: Requirements
    options: list[Option]
    excluded: list[Exclusion]
    summary: str


def rounded(value: float) -> float:
    """Four significant digits: estimates are not more precise than that."""
    if value == 0 or not math.isfinite(value):
        return value
    if -1000 < value < 1000:
        return float(f"{value:.4g}")  # the same correctly rounded figure as round(), at a third of the cost
    return round(value, 0)


@dataclass(frozen=True)
class GpuRatios:
    """A GPU's figures divided by the baseline's; None where either side lacks the figure."""

    gpu: Gpu
    memory_gb: float | None
    memory_bandwidth_gbps: float | None
    bf16_tflops: float | None
    fp8_tflops: float | None
    tdp_w: float | None
    usd_per_gpu_hour: float | None
    on_demand: Offer | None
