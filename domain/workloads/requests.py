"""Workloads users describe (inference, training, fine-tuning, image generation), constraints, and normalisation."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from domain.catalog import (
    Ecosystem,
    Pricing,
    Vendor,
)

Precision = Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4", "fp4"]
KvPrecision = Literal["fp32", "bf16", "fp16", "fp8"]
TrainingPrecision = Literal["fp32", "bf16", "fp16", "fp8"]
ImagePrecision = Literal["fp32", "bf16", "fp16", "fp8", "int8"]
Objective = Literal["balanced", "cost", "speed"]
EngineName = Literal["vllm", "sglang", "trtllm"]
UseCase = Literal["chat", "agent", "batch"]
Currency = Literal["USD", "CNY"]
Lang = Literal["en", "zh"]

# The latency targets a use case applies when the request names none: (max_tpot_ms, max_ttft_ms).
# chat: a person reads the answer as it streams; 100 ms per token (10 tokens/s) stays ahead of reading speed and 2 s
# is the wait before an answer starts that chat products treat as the limit. agent: a program reads the output, but it
# waits for each step before the next call, so the decode time of every step adds to the task's: the same 100 ms per
# token as chat; its long (largely cached) prompts get 5 s to the first token. batch: throughput only.
USE_CASE_TARGETS: dict[UseCase, tuple[float | None, float | None]] = {
    "chat": (100.0, 2000.0),
    "agent": (100.0, 5000.0),
    "batch": (None, None),
}

Tokens = Annotated[int, msgspec.Meta(ge=1, le=10_000_000, description="Tokens per request.")]
Milliseconds = Annotated[float, msgspec.Meta(gt=0, le=3_600_000)]
GpuName = Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
NameList = Annotated[list[GpuName], msgspec.Meta(max_length=100)]
ProviderIds = Annotated[
    list[Annotated[str, msgspec.Meta(min_length=1, max_length=64)]], msgspec.Meta(min_length=1, max_length=50)
]


class WorkloadSpec(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """Base of everything a client describes: strict, immutable."""


class CustomModel(WorkloadSpec, kw_only=True, frozen=True):
    """A language model that is not in the catalog: its config.json as `hf_config`, or its figures one by one."""

    name: Annotated[str, msgspec.Meta(min_length=1, max_length=100)] = "custom model"
    hf_config: (
        Annotated[
            dict[str, Any],
            msgspec.Meta(
                description=(
                    "The model's config.json pasted as an object (Llama, Llama 4, Qwen2/3, Qwen3-MoE, Mistral, "
                    "Mixtral, DeepSeek-V2/V3, Kimi K2, GLM-4.5, gpt-oss, Gemma 3); the architecture and parameter "
                    "count are derived from it. Give it instead of the other figures."
                )
            ),
        ]
        | None
    ) = None
    params_b: Annotated[float, msgspec.Meta(gt=0, le=20_000, description="Total parameters, billions.")] | None = None
    active_params_b: (
        Annotated[float, msgspec.Meta(gt=0, le=20_000, description="Parameters active per token (MoE), billions.")]
        | None
    ) = None
    layers: Annotated[int, msgspec.Meta(ge=1, le=1000)] | None = None
    hidden_size: Annotated[int, msgspec.Meta(ge=64, le=131_072)] | None = None
    attention_heads: Annotated[int, msgspec.Meta(ge=1, le=1024)] | None = None
    kv_heads: Annotated[int, msgspec.Meta(ge=1, le=1024)] | None = None
    head_dim: Annotated[int, msgspec.Meta(ge=8, le=1024)] | None = None
    intermediate_size: Annotated[int, msgspec.Meta(ge=1, le=1_000_000)] | None = None
    vocab_size: Annotated[int, msgspec.Meta(ge=1, le=2_000_000)] = 32_000
    tied_embeddings: Annotated[
        bool,
        msgspec.Meta(
            description="One vocab x hidden matrix serves as input embedding and output head (tie_word_embeddings); "
            "an untied model's input embedding is a lookup, left out of its FLOPs per token."
        ),
    ] = False
    max_context: Annotated[int, msgspec.Meta(ge=1, le=10_000_000)] = 131_072
    attention: Literal["mha", "gqa", "mla"] = "gqa"
    kv_lora_rank: Annotated[int, msgspec.Meta(ge=1, le=65_536)] | None = None
    qk_rope_head_dim: Annotated[int, msgspec.Meta(ge=1, le=4096)] | None = None
    routed_experts: Annotated[int, msgspec.Meta(ge=2, le=4096)] | None = None
    experts_per_token: Annotated[int, msgspec.Meta(ge=1, le=4096)] | None = None
    shared_experts: Annotated[int, msgspec.Meta(ge=0, le=64)] = 0


class InferenceWorkload(WorkloadSpec, kw_only=True, frozen=True, tag="inference", tag_field="kind"):
    """Serving an LLM: with neither concurrency nor requests_per_second the goal is maximum (offline) throughput."""

    model: GpuName | None = None
    custom_model: CustomModel | None = None
    precision: Precision | None = None
    kv_cache_precision: KvPrecision | None = None
    input_tokens: Tokens = 1024
    output_tokens: Tokens = 256
    concurrency: Annotated[int, msgspec.Meta(ge=1, le=1_000_000)] | None = None
    requests_per_second: Annotated[float, msgspec.Meta(gt=0, le=1_000_000)] | None = None
    max_ttft_ms: Milliseconds | None = None
    max_tpot_ms: Milliseconds | None = None
    engine: Annotated[
        EngineName,
        msgspec.Meta(
            description="Serving engine: vllm (default), sglang or trtllm (NVIDIA only); sets the batch cap, the "
            "default KV-cache dtype and the decode efficiency, stated in the assumptions."
        ),
    ] = "vllm"
    use_case: Annotated[
        UseCase,
        msgspec.Meta(
            description="chat (default): interactive; unless max_tpot_ms/max_ttft_ms say otherwise an option must "
            "keep TPOT <= 100 ms and TTFT <= 2,000 ms to meet the targets. agent: a program reads the output and "
            "waits for each step: TPOT <= 100 ms, TTFT <= 5,000 ms for its long prompts. batch: throughput only, no "
            "latency targets. The targets applied are stated in the assumptions and the summary."
        ),
    ] = "chat"


class TrainingWorkload(WorkloadSpec, kw_only=True, frozen=True, tag="training", tag_field="kind"):
    """Pre-training or continued training of an LLM on train_tokens tokens."""

    model: GpuName | None = None
    custom_model: CustomModel | None = None
    precision: TrainingPrecision = "bf16"
    train_tokens: Annotated[float, msgspec.Meta(ge=1e3, le=1e15, description="Tokens seen in the run.")] = 1e10
    sequence_length: Annotated[int, msgspec.Meta(ge=128, le=1_048_576)] = 4096
    optimizer: Literal["adamw", "adamw_8bit"] = "adamw"
    target_days: Annotated[float, msgspec.Meta(gt=0, le=3650)] | None = None


class FineTuningWorkload(WorkloadSpec, kw_only=True, frozen=True, tag="fine_tuning", tag_field="kind"):
    """Fine-tuning an LLM, fully or with LoRA/QLoRA adapters, on train_tokens tokens (dataset x epochs)."""

    model: GpuName | None = None
    custom_model: CustomModel | None = None
    method: Literal["full", "lora", "qlora"] = "lora"
    lora_rank: Annotated[int, msgspec.Meta(ge=1, le=4096)] = 16
    precision: TrainingPrecision = "bf16"
    train_tokens: Annotated[float, msgspec.Meta(ge=1e3, le=1e13, description="Tokens seen in the run.")] = 1e8
    sequence_length: Annotated[int, msgspec.Meta(ge=128, le=1_048_576)] = 4096
    optimizer: Literal["adamw", "adamw_8bit"] = "adamw"
    target_hours: Annotated[float, msgspec.Meta(gt=0, le=87_600)] | None = None


class ImageGenerationWorkload(WorkloadSpec, kw_only=True, frozen=True, tag="image_generation", tag_field="kind"):
    """Generating images with a diffusion pipeline."""

    model: GpuName = "sdxl"
    width: Annotated[int, msgspec.Meta(ge=64, le=8192, multiple_of=8)] = 1024
    height: Annotated[int, msgspec.Meta(ge=64, le=8192, multiple_of=8)] = 1024
    steps: Annotated[int, msgspec.Meta(ge=1, le=1000)] | None = None
    images_per_hour: Annotated[float, msgspec.Meta(ge=0.001, le=100_000_000)] | None = None
    precision: ImagePrecision = "fp16"


Workload = InferenceWorkload | TrainingWorkload | FineTuningWorkload | ImageGenerationWorkload
LlmWorkload = InferenceWorkload | TrainingWorkload | FineTuningWorkload


def workload_kind(workload: Workload) -> str:
    """The `kind` tag a workload is sent with."""
    return str(type(workload).__struct_config__.tag)


class Constraints(WorkloadSpec, kw_only=True, frozen=True):
    """What the answer may contain: GPUs, vendors, providers, pricing models, counts and budget."""

    gpus: NameList | None = None
    exclude_gpus: NameList | None = None
    vendors: list[Vendor] | None = None
    ecosystems: list[Ecosystem] | None = None
    providers: ProviderIds | None = None
    pricing: list[Pricing] | None = None
    gpu_count: Annotated[int, msgspec.Meta(ge=1, le=4096)] | None = None
    max_gpus: Annotated[int, msgspec.Meta(ge=1, le=4096)] = 64
    max_nodes: Annotated[int, msgspec.Meta(ge=1, le=512)] = 8
    single_node: bool = False
    max_usd_per_hour: Annotated[float, msgspec.Meta(gt=0, le=10_000_000)] | None = None
    require_offer: bool = True
    prices: (
        Annotated[
            dict[
                Annotated[str, msgspec.Meta(min_length=1, max_length=100)],
                Annotated[float, msgspec.Meta(gt=0, le=100_000)],
            ],
            msgspec.Meta(
                max_length=64,
                description="Your own price per GPU-hour in USD by GPU id or name (a negotiated rate); it replaces "
                "the catalog's offers of that GPU for this request and is stated in the assumptions.",
            ),
        ]
        | None
    ) = None


DEFAULT_PRICING: tuple[Pricing, ...] = ("on_demand",)


LIMIT_MAX = 50


class RecommendationRequest(WorkloadSpec, kw_only=True, frozen=True):
    """A workload, what the answer may contain and how to rank it."""

    workload: Workload
    constraints: Constraints | None = None
    objective: Annotated[
        Objective,
        msgspec.Meta(
            description="balanced: the cheapest way to meet the need first, then maturity, headroom and scaling. "
            "cost: the cheapest way to meet the need first, the score (80% of it cost) breaking ties. "
            "speed: the fastest configuration among those that meet the targets."
        ),
    ] = "balanced"
    currency: Currency = "USD"
    lang: Lang | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=LIMIT_MAX)] = 10


class LayoutRequest(WorkloadSpec, kw_only=True, frozen=True):
    """A layout forced on one model copy."""

    tensor: Annotated[int, msgspec.Meta(ge=1, le=1024, description="GPUs one layer is split over.")] = 1
    pipeline: Annotated[int, msgspec.Meta(ge=1, le=256, description="Pipeline stages of one model copy.")] = 1
    expert: Annotated[
        int, msgspec.Meta(ge=1, le=1024, description="GPUs the routed experts are split over (MoE); 1 = none.")
    ] = 1


class EstimateRequest(WorkloadSpec, kw_only=True, frozen=True):
    """A workload on one explicit configuration."""

    workload: Workload
    gpu: Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
    gpu_count: Annotated[int, msgspec.Meta(ge=1, le=4096)]
    provider: Annotated[str, msgspec.Meta(max_length=64)] | None = None
    pricing: Pricing | None = None
    currency: Currency = "USD"
    lang: Lang | None = None
    parallelism: (
        Annotated[
            LayoutRequest,
            msgspec.Meta(description="Force this layout per model copy; without it the layout is searched."),
        ]
        | None
    ) = None
    max_batch: (
        Annotated[
            int,
            msgspec.Meta(
                ge=1,
                le=65_536,
                description="Sequences in flight per model copy; replaces the engine's default cap, above it too "
                "(the launch command sets the engine's flag).",
            ),
        ]
        | None
    ) = None
