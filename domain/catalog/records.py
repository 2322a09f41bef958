"""Catalog records (GPUs, systems, providers, offers, workload models) and the immutable, indexed snapshot."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from typing import Annotated, Any, Literal

import msgspec

Positive = Annotated[float, msgspec.Meta(gt=0)]
PositiveInt = Annotated[int, msgspec.Meta(gt=0)]
NonNegativeInt = Annotated[int, msgspec.Meta(ge=0)]
Text = Annotated[str, msgspec.Meta(min_length=1)]
# `(?!\n)$` is the end of input both to Python (whose bare `$` also matches before a final newline) and to ECMA-262,
# the dialect the published schema states.
SLUG_PATTERN = r"^[a-z0-9][a-z0-9.\-]*(?!\n)$"
Slug = Annotated[str, msgspec.Meta(pattern=SLUG_PATTERN, max_length=64)]
Sources = Annotated[tuple[Text, ...], msgspec.Meta(min_length=1)]

Vendor = Literal["nvidia", "amd", "intel", "huawei"]
Ecosystem = Literal["cuda", "rocm", "gaudi", "cann"]
Pricing = Literal["on_demand", "reserved_1y", "reserved_3y", "spot", "capacity_block"]
PRICING_MODELS: tuple[Pricing, ...] = ("on_demand", "reserved_1y", "reserved_3y", "spot", "capacity_block")
LinkKind = Literal["nvswitch", "nvlink", "nvlink_bridge", "infinity_fabric", "ethernet", "hccs", "pcie"]
Confidence = Literal["datasheet", "low"]
Tier = Literal["community", "secure"]


class Record(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Base of every catalog record: immutable, strict about unknown fields."""


class Tflops(Record, kw_only=True, frozen=True):
    """Dense peak throughput in TFLOPS (TOPS for int8); None where the GPU has no such path."""

    fp32: Positive | None = None
    tf32: Positive | None = None
    fp16: Positive | None = None
    bf16: Positive | None = None
    fp8: Positive | None = None
    int8: Positive | None = None
    fp4: Positive | None = None


class Interconnect(Record, kw_only=True, frozen=True):
    """GPU-to-GPU link; bandwidth is the total bidirectional figure per GPU."""

    kind: LinkKind
    bandwidth_gbps: Positive | None = None
    description: Text
    # GPUs one scale-up (NVLink) domain joins at this bandwidth: an 8-GPU board or machine, or 72 in an NVL72 rack.
    # Tensor and expert parallel groups inside it talk over this link; beyond it, over the inter-node network.
    domain_gpus: PositiveInt = 8


class Gpu(Record, kw_only=True, frozen=True):
    """One accelerator model with datasheet (dense) figures."""

    id: Slug
    name: Text
    vendor: Vendor
    architecture: Text
    launch_year: Annotated[int, msgspec.Meta(ge=2010, le=2035)]
    segment: Literal["datacenter", "workstation", "consumer"]
    memory_gb: Positive
    memory_type: Text
    memory_bandwidth_gbps: Positive
    tflops: Tflops
    tdp_w: Positive
    form_factor: Text
    interconnect: Interconnect
    ecosystem: Ecosystem
    aliases: tuple[Text, ...] = ()
    sources: Sources
    confidence: Confidence = "datasheet"
    market: Literal["global", "china"] = "global"
    # GeForce cards and the L40 run FP16/BF16 (and FP8) with FP32 accumulation at half the FP16-accumulate rate;
    # the stored figures are the FP32-accumulate ones (FP4 has a single rate), so the sparse-figure check must allow
    # the wider ratios.
    half_rate_fp32_accumulate: bool = False
    notes: str = ""
    notes_zh: str = ""  # the same notes in Chinese, for answers in Chinese

    @property
    def supports_fp8(self) -> bool:
        return self.tflops.fp8 is not None

    @property
    def supports_fp4(self) -> bool:
        return self.tflops.fp4 is not None

    @property
    def has_nvlink(self) -> bool:
        return self.interconnect.kind in ("nvswitch", "nvlink", "nvlink_bridge")


class SystemPrice(Record, kw_only=True, frozen=True):
    """A purchase price with its basis, date and source."""

    usd: Positive
    usd_low: Positive | None = None
    usd_high: Positive | None = None
    basis: Literal["list", "street", "quote", "estimate"]
    as_of: date
    source: Text
    confidence: Confidence = "datasheet"


class System(Record, kw_only=True, frozen=True):
    """A multi-accelerator server or rack (8 GPUs, or one 72-GPU NVLink domain for NVL72 racks)."""

    id: Slug
    name: Text
    vendor: Vendor
    gpu: Slug
    gpu_count: PositiveInt
    total_memory_gb: Positive
    power_kw: Positive | None = None
    power_note: str = ""
    fabric: Text
    network: Text
    price: SystemPrice | None = None
    aliases: tuple[Text, ...] = ()
    sources: Sources
    notes: str = ""


class Provider(Record, kw_only=True, frozen=True):
    """A company that rents GPUs; `feed` names the price feed that keeps its offers current, if any."""

    id: Slug
    name: Text
    kind: Literal["hyperscaler", "gpu_cloud", "marketplace"]
    url: Text
    sources: Sources
    notes: str = ""
    feed: str | None = None
    last_synced_at: datetime | None = None


class Offer(Record, kw_only=True, frozen=True):
    """A rentable configuration at a dated, sourced price per GPU-hour."""

    id: Slug
    provider: Slug
    gpu: Slug
    gpus_per_instance: PositiveInt = 1
    pricing: Pricing
    usd_per_gpu_hour: Positive
    instance: str | None = None
    vcpus: PositiveInt | None = None
    ram_gb: Positive | None = None
    bare_metal: bool | None = None
    region: str | None = None
    # Where a provider sells one GPU in two tiers (RunPod's Community and Secure Cloud), which one this price is for.
    tier: Tier | None = None
    as_of: date
    source: Text
    notes: str = ""

    def age_days(self, today: date) -> int:
        """Days since the price was seen."""
        return max(0, (today - self.as_of).days)

    @property
    def identity(self) -> tuple[str, str, str, str | None, int]:
        """What makes two offers the same thing to rent: provider, GPU, pricing model, tier and instance size."""
        return (self.provider, self.gpu, self.pricing, self.tier, self.gpus_per_instance)


class MoE(Record, kw_only=True, frozen=True):
    """Mixture-of-experts layout."""

    routed_experts: PositiveInt
    experts_per_token: PositiveInt
    shared_experts: NonNegativeInt = 0
    first_dense_layers: NonNegativeInt = 0
    expert_intermediate_size: PositiveInt


class Mla(Record, kw_only=True, frozen=True):
    """Multi-head latent attention: the KV cache holds kv_lora_rank + qk_rope_head_dim elements per token and layer."""

    kv_lora_rank: PositiveInt
    qk_rope_head_dim: PositiveInt
    qk_nope_head_dim: PositiveInt
    v_head_dim: PositiveInt
    q_lora_rank: PositiveInt | None = None


class LlmModel(Record, kw_only=True, frozen=True, tag="llm", tag_field="kind"):
    """A decoder-only language model as its config.json describes it."""

    id: Slug
    name: Text
    family: Text
    params_b: Positive
    active_params_b: Positive | None = None
    layers: PositiveInt
    hidden_size: PositiveInt
    intermediate_size: PositiveInt
    attention_heads: PositiveInt
    kv_heads: PositiveInt | None = None
    head_dim: PositiveInt
    vocab_size: PositiveInt
    # One vocab x hidden matrix serves as input embedding and output head (config.json's tie_word_embeddings);
    # untied models hold two, and params_b counts both.
    tied_embeddings: bool = False
    # Attention details a training framework must be told to build the checkpoint's shape (transformers' modeling
    # code, not config.json, holds them): biases on the query, key and value projections (Qwen2), and RMSNorm over
    # each query and key head (Qwen3, Gemma 3).
    qkv_bias: bool = False
    qk_norm: bool = False
    max_context: PositiveInt
    attention: Literal["mha", "gqa", "mla"]
    sliding_window: PositiveInt | None = None
    # Which layers are windowed: every one, every other one, or five in six (Gemma 3: one global layer in six).
    sliding_window_layers: Literal["all", "alternate", "five_of_six"] | None = None
    # Layers with linear attention (Qwen3-Next's Gated DeltaNet) keep a fixed-size state instead of a KV cache.
    linear_attention_layers: NonNegativeInt = 0
    moe: MoE | None = None
    mla: Mla | None = None
    native_precision: Literal["fp32", "bf16", "fp16", "fp8", "mxfp4"] = "bf16"
    checkpoint_gb: Positive | None = None
    aliases: tuple[Text, ...] = ()
    sources: Sources
    notes: str = ""


class ModelComponent(Record, kw_only=True, frozen=True):
    """A network inside a diffusion pipeline."""

    name: Text
    architecture: Text
    params_b: Positive


class DiffusionModel(Record, kw_only=True, frozen=True, tag="diffusion", tag_field="kind"):
    """An image diffusion pipeline: denoiser, text encoders and VAE."""

    id: Slug
    name: Text
    family: Text
    denoiser: ModelComponent
    text_encoders: tuple[ModelComponent, ...]
    vae_params_b: Positive
    vae_latent_channels: PositiveInt
    native_resolution: PositiveInt
    default_steps: PositiveInt
    passes_per_step: PositiveInt
    tflop_per_pass_1024: Positive | None = None
    vae_decode_tflop_1024: Positive | None = None
    aliases: tuple[Text, ...] = ()
    sources: Sources
    notes: str = ""


ModelSpec = LlmModel | DiffusionModel


class CatalogError(ValueError):
    """Reference or stored catalog data that must not be served; the message names every bad record."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("invalid catalog data:\n  " + "\n  ".join(self.problems))


# Longer input is no name anyone typed (fuzzy matching it would only cost time), and no name column holds more.
MAX_NAME_LENGTH = 200


def lookup_key(name: str) -> str:
    """Fold a user-typed name to the form ids and aliases are matched in ("H100 SXM5" -> "h100sxm5")."""
    return re.sub(r"[\W_]+", "", name.casefold())


# A dense FP8 path is at most 2x the dense BF16 one (1x on Gaudi 3); 4x means someone copied a 2:4-sparse figure.
_DENSE_RATIO_LIMITS: tuple[tuple[str, str, float], ...] = (
    ("tf32", "bf16", 0.55),
    ("fp8", "bf16", 2.2),
    ("int8", "bf16", 2.2),
    ("fp4", "fp8", 3.1),
)


def sparse_problems(gpu: Gpu) -> list[str]:
    problems = []
    figures = gpu.tflops
    for name, base, limit in _DENSE_RATIO_LIMITS:
        value, reference = (
            getattr(figures, name),
            getattr(figures, base) or (figures.fp16 if base == "bf16" else None),
        )
        if value is None or reference is None:
            continue
        allowed = limit * 2 if gpu.half_rate_fp32_accumulate and base in ("bf16", "fp8") else limit
        if value > allowed * reference:
            problems.append(
                f"gpu {gpu.id!r}: {name.upper()} {value:g} is {value / reference:.1f}x {base.upper()} "
                f"{reference:g}; a dense figure is at most {allowed:g}x, so this looks like a 2:4-sparse figure"
            )
    return problems


def decode_records(kind: str, raw_records: Iterable[Mapping[str, Any]], record_type: Any) -> list[Any]:
    """Convert raw mappings (parsed TOML or database rows) into records, naming each bad one."""
    records, problems = [], []
    for position, raw in enumerate(raw_records, start=1):
        try:
            records.append(msgspec.convert(raw, record_type, strict=False))
        except msgspec.ValidationError as error:
            problems.append(f"{kind} {raw.get('id', f'#{position}')!r}: {error}")
    if problems:
        raise CatalogError(problems)
    return records
