"""Wire Structs of the published contract, kept apart from domain types so a domain refactor cannot change it."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Any, Literal

import msgspec

from domain.catalog import Confidence, Ecosystem, LinkKind, Pricing, Tier, Vendor
from domain.workloads.requests import Lang


class Wire(msgspec.Struct, kw_only=True):
    """Base of every request and response body."""


class FieldError(Wire, kw_only=True, omit_defaults=True):
    """One invalid input; `line` names the row of an imported file (CSV line, or position in a JSON list)."""

    field: str
    message: str
    line: int | None = None
    # A value outside an enum: every value the field allows, and the closest to the one sent.
    allowed: list[str] | None = None
    suggestions: list[str] | None = None


class Problem(Wire, kw_only=True, omit_defaults=True):
    """RFC 9457 problem details, the body of every error."""

    type: str
    title: str
    status: int
    detail: str
    instance: str | None = None
    errors: list[FieldError] | None = None
    suggestions: list[str] | None = None


class TflopsRead(Wire):
    """Dense peak throughput in TFLOPS (int8 in TOPS); null where the GPU has no such path."""

    fp32: float | None
    tf32: float | None
    fp16: float | None
    bf16: float | None
    fp8: float | None
    int8: float | None
    fp4: float | None


class InterconnectRead(Wire):
    """GPU-to-GPU link; bandwidth is the total bidirectional GB/s per GPU."""

    kind: LinkKind
    bandwidth_gbps: float | None
    description: str
    domain_gpus: Annotated[
        int,
        msgspec.Meta(
            description="GPUs one scale-up (NVLink) domain joins at this bandwidth: 8 on a board or machine, "
            "72 in an NVL72 rack; tensor and expert parallel groups may span it."
        ),
    ]


class SupportsRead(Wire):
    """Features that decide what a GPU can run well."""

    fp8: bool
    fp4: bool
    nvlink: bool


class PriceRead(Wire):
    """The cheapest offer of one pricing model."""

    offer_id: str
    provider: str
    usd_per_gpu_hour: float
    gpus_per_instance: int
    as_of: date
    source: str


class LowestPricesRead(Wire):
    """The cheapest known offer per pricing model; null where nobody offers it."""

    on_demand: PriceRead | None = None
    reserved_1y: PriceRead | None = None
    reserved_3y: PriceRead | None = None
    spot: PriceRead | None = None
    capacity_block: PriceRead | None = None


class GpuRead(Wire):
    """A GPU with datasheet (dense) figures, sources and lowest prices."""

    id: str
    name: str
    vendor: Vendor
    architecture: str
    launch_year: int
    segment: Literal["datacenter", "workstation", "consumer"]
    memory_gb: float
    memory_type: str
    memory_bandwidth_gbps: float
    tflops: TflopsRead
    tdp_w: float
    form_factor: str
    interconnect: InterconnectRead
    ecosystem: Ecosystem
    supports: SupportsRead
    aliases: list[str]
    sources: list[str]
    confidence: Confidence
    market: Literal["global", "china"]
    half_rate_fp32_accumulate: bool
    notes: str
    lowest_price: LowestPricesRead


class Page(Wire):
    """Paging of a list that can grow."""

    total: int
    limit: int
    offset: int


class GpuList(Page):
    """A page of GPUs."""

    items: list[GpuRead]


class GpuRatios(Wire):
    """One GPU's figures divided by the first GPU's; null where either side lacks the figure."""

    gpu: str
    memory_gb: float | None
    memory_bandwidth_gbps: float | None
    bf16_tflops: float | None
    fp8_tflops: float | None
    tdp_w: float | None
    usd_per_gpu_hour: float | None


class GpuComparisonRead(Wire):
    """GPUs side by side with ratios to the first one and a sentence a chatbot can say."""

    baseline: str
    items: list[GpuRead]
    ratios: list[GpuRatios]
    summary: str
    lang: Lang


class GpuRef(Wire):
    """A GPU named inside another record."""

    id: str
    name: str
    vendor: Vendor


class SystemPriceRead(Wire):
    """A purchase price with its basis, date and source."""

    usd: float
    usd_low: float | None
    usd_high: float | None
    basis: Literal["list", "street", "quote", "estimate"]
    as_of: date
    source: str
    confidence: Confidence


class SystemRead(Wire):
    """An 8-accelerator server."""

    id: str
    name: str
    vendor: Vendor
    gpu: GpuRef
    gpu_count: int
    total_memory_gb: float
    power_kw: float | None
    power_note: str
    fabric: str
    network: str
    price: SystemPriceRead | None
    aliases: list[str]
    sources: list[str]
    notes: str


class SystemList(Wire):
    """Every system."""

    items: list[SystemRead]
    total: int


class ProviderRead(Wire):
    """A company renting GPUs."""

    id: str
    name: str
    kind: Literal["hyperscaler", "gpu_cloud", "marketplace"]
    url: str
    offer_count: int
    sources: list[str]
    notes: str
    feed: str | None = None
    last_synced_at: datetime | None = None


class ProviderList(Wire):
    """Every provider."""

    items: list[ProviderRead]
    total: int


TIER_DESCRIPTION = (
    "Which of a provider's two clouds sells it, where it sells both at different prices: `community` (hosts run by "
    "third parties, e.g. RunPod Community Cloud) or `secure` (the provider's own data centres); null where the "
    "provider has one tier. Part of what makes two offers the same thing to rent."
)
TierField = Annotated[Tier | None, msgspec.Meta(description=TIER_DESCRIPTION)]


class OfferRead(Wire):
    """A rentable configuration at a dated, sourced price."""

    id: str
    provider: str
    gpu: str
    gpus_per_instance: int
    pricing: Pricing
    usd_per_gpu_hour: float
    usd_per_instance_hour: float
    instance: str | None
    vcpus: int | None
    ram_gb: float | None
    bare_metal: bool | None
    region: str | None
    tier: TierField
    as_of: date
    age_days: int
    source: str
    notes: str


class OfferWrite(Wire, kw_only=True, forbid_unknown_fields=True):
    """An offer as an administrator sends it: the representation GET /v1/offers returns."""

    # Read-only fields (`id`, `usd_per_instance_hour`, `age_days`) are accepted and ignored.

    id: str | None = None
    provider: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    gpu: Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
    gpus_per_instance: Annotated[int, msgspec.Meta(ge=1, le=1024)] = 1
    pricing: Pricing
    # A hundredth of a cent per GPU-hour is below any real price and survives storage without rounding to 0.
    usd_per_gpu_hour: Annotated[float, msgspec.Meta(ge=0.0001, le=10_000)]
    usd_per_instance_hour: float | None = None
    instance: Annotated[str, msgspec.Meta(max_length=120)] | None = None
    vcpus: Annotated[int, msgspec.Meta(ge=1, le=100_000)] | None = None
    ram_gb: Annotated[float, msgspec.Meta(gt=0, le=1_000_000)] | None = None
    bare_metal: bool | None = None
    region: Annotated[str, msgspec.Meta(max_length=120)] | None = None
    tier: TierField = None
    as_of: date
    age_days: int | None = None
    source: Annotated[str, msgspec.Meta(min_length=1, max_length=2000)]
    notes: Annotated[str, msgspec.Meta(max_length=4000)] = ""


class OfferBulkRead(Wire):
    """What a bulk import changed."""

    created: list[str]
    updated: list[str]
    unchanged: list[str]
    catalog_version: str


class OfferHistoryRead(Wire):
    """One change of an offer."""

    offer_id: str
    change: Literal["created", "updated", "deleted", "gone", "superseded"]
    actor: str
    usd_per_gpu_hour: float | None
    previous_usd_per_gpu_hour: float | None
    pricing: str
    as_of: date
    source: str
    recorded_at: datetime
    tier: TierField = None
    superseded_by: Annotated[
        str | None,
        msgspec.Meta(
            description="For a `superseded` change: the id of the price-feed offer of the same provider, GPU, "
            "pricing model, tier and instance size that replaced this curated offer; null otherwise."
        ),
    ] = None


class OfferHistoryList(Wire):
    """An offer's changes, newest first."""

    items: list[OfferHistoryRead]
    total: int


class OfferList(Page):
    """A page of offers."""

    items: list[OfferRead]


class MoERead(Wire):
    """Mixture-of-experts layout."""

    routed_experts: int
    experts_per_token: int
    shared_experts: int
    first_dense_layers: int
    expert_intermediate_size: int


class MlaRead(Wire):
    """Multi-head latent attention dimensions."""

    kv_lora_rank: int
    qk_rope_head_dim: int
    qk_nope_head_dim: int
    v_head_dim: int
    q_lora_rank: int | None


class LlmModelRead(Wire, tag="llm", tag_field="kind"):
    """A language model's architecture, as its config.json gives it."""

    id: str
    name: str
    family: str
    params_b: float
    active_params_b: float | None
    layers: int
    hidden_size: int
    intermediate_size: int
    attention_heads: int
    kv_heads: int | None
    head_dim: int
    vocab_size: int
    max_context: int
    attention: Literal["mha", "gqa", "mla"]
    sliding_window: int | None
    sliding_window_layers: Literal["all", "alternate", "five_of_six"] | None
    linear_attention_layers: int
    moe: MoERead | None
    mla: MlaRead | None
    native_precision: Literal["fp32", "bf16", "fp16", "fp8", "mxfp4"]
    checkpoint_gb: float | None
    aliases: list[str]
    sources: list[str]
    notes: str


class ModelComponentRead(Wire):
    """A network inside a diffusion pipeline."""

    name: str
    architecture: str
    params_b: float


class DiffusionModelRead(Wire, tag="diffusion", tag_field="kind"):
    """An image diffusion pipeline."""

    id: str
    name: str
    family: str
    denoiser: ModelComponentRead
    text_encoders: list[ModelComponentRead]
    vae_params_b: float
    vae_latent_channels: int
    native_resolution: int
    default_steps: int
    passes_per_step: int
    tflop_per_pass_1024: float | None
    vae_decode_tflop_1024: float | None
    aliases: list[str]
    sources: list[str]
    notes: str


ModelRead = LlmModelRead | DiffusionModelRead


class ModelList(Wire):
    """Every workload model."""

    items: list[ModelRead]
    total: int


class LiveRead(Wire):
    """The process is up."""

    status: Literal["ok"]


class ReadyRead(Wire):
    """Whether this instance can serve, and in what state its dependencies are."""

    status: Literal["ok", "degraded", "unavailable"]
    database: Literal["ok", "unavailable"]
    redis: Literal["ok", "degraded", "local"]
    catalog_version: str
    catalog_source: Literal["database", "reference"]
    catalog_loaded_at: datetime
    # Recommendations answered but not yet stored; `stalled` when that queue has stopped shrinking.
    recommendations: Literal["ok", "pending", "stalled"] = "ok"
    pending_recommendations: int = 0


class ToolOperationRead(Wire):
    """The HTTP operation that does what a tool does, for clients that call the API themselves."""

    method: Literal["GET", "POST"]
    path: str
    arguments: Literal["json_body", "query"]


class ToolManifestRead(Wire):
    """The chatbot tools as function definitions for a chat API."""

    format: Literal["openai", "anthropic"]
    tools: list[dict[str, Any]]
    operations: dict[str, ToolOperationRead]
    mcp_path: str
