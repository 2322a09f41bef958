"""Workloads users describe (inference, training, fine-tuning, image generation), constraints, and normalisation."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import msgspec

from domain.catalog import (
    Catalog,
    DiffusionModel,
    Ecosystem,
    LlmModel,
    Mla,
    ModelSpec,
    MoE,
    Pricing,
    Vendor,
)
from domain.hf_config import HfConfigError, llm_from_hf_config

Precision = Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4", "fp4"]
KvPrecision = Literal["fp32", "bf16", "fp16", "fp8"]
TrainingPrecision = Literal["fp32", "bf16", "fp16", "fp8"]
ImagePrecision = Literal["fp32", "bf16", "fp16", "fp8", "int8"]
Objective = Literal["balanced", "cost", "speed"]
EngineName = Literal["vllm", "sglang", "trtllm"]
UseCase = Literal["chat", "agent", "batch"]

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


class WorkloadError(ValueError):
    """The request names something that does not exist or contradicts itself; answered as a 400 problem."""

    def __init__(self, field: str, message: str, suggestions: list[str] | None = None) -> None:
        super().__init__(message)
        self.field = field
        self.message = message
        self.suggestions = suggestions or []


def unknown_name(catalog: Catalog, kind: Literal["gpu", "model", "system"], name: str, field: str) -> WorkloadError:
    """The 400 for a name the catalog does not know, with the closest ids."""
    suggestions = catalog.suggest(kind, name)
    hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
    label = {"gpu": "GPU", "model": "model", "system": "system"}[kind]
    return WorkloadError(field, f"no {label} {name!r} in the catalog{hint}", suggestions)


def check_providers(catalog: Catalog, providers: Sequence[str] | None, field: str) -> None:
    """A 400 for the first provider id the catalog does not know, listing the known ones."""
    for provider in providers or ():
        if catalog.provider(provider) is None:
            known = [p.id for p in catalog.providers]
            raise WorkloadError(field, f"no provider {provider!r}; known: {', '.join(known)}", known[:3])


def resolve_prices(catalog: Catalog, prices: dict[str, float] | None, field: str) -> dict[str, float] | None:
    """The user's own prices keyed by catalog GPU id; a 400 for a GPU the catalog does not know."""
    if prices is None:
        return None
    resolved: dict[str, float] = {}
    for name, usd in prices.items():
        gpu = catalog.gpu(name)
        if gpu is None:
            raise unknown_name(catalog, "gpu", name, field)
        resolved[gpu.id] = usd
    return dict(sorted(resolved.items()))


@dataclass(frozen=True)
class Resolved:
    """A workload with every default filled and its model looked up."""

    workload: Workload
    model: ModelSpec


_REQUIRED_FIGURES = ("params_b", "layers", "hidden_size", "attention_heads")


def _custom_llm(custom: CustomModel) -> LlmModel:
    if custom.hf_config is not None:
        given = [name for name in _REQUIRED_FIGURES if getattr(custom, name) is not None]
        if given:
            raise WorkloadError(f"workload.custom_model.{given[0]}", "give either hf_config or the figures, not both")
        try:
            return llm_from_hf_config(custom.hf_config, name=custom.name)
        except HfConfigError as error:
            raise WorkloadError(f"workload.custom_model.hf_config.{error.field}", error.message) from None
    for name in _REQUIRED_FIGURES:
        if getattr(custom, name) is None:
            raise WorkloadError(f"workload.custom_model.{name}", f"{name} is required (or give hf_config)")
    assert custom.params_b and custom.layers and custom.hidden_size and custom.attention_heads
    if custom.attention == "mla" and (custom.kv_lora_rank is None or custom.qk_rope_head_dim is None):
        raise WorkloadError(
            "workload.custom_model.kv_lora_rank", "attention 'mla' needs kv_lora_rank and qk_rope_head_dim"
        )
    moe = None
    if custom.routed_experts or custom.experts_per_token:
        if not (custom.routed_experts and custom.experts_per_token and custom.active_params_b):
            raise WorkloadError(
                "workload.custom_model",
                "a mixture-of-experts model needs routed_experts, experts_per_token and active_params_b",
            )
        if custom.experts_per_token >= custom.routed_experts:
            raise WorkloadError(
                "workload.custom_model.experts_per_token", "experts_per_token must be fewer than routed_experts"
            )
        moe = MoE(
            routed_experts=custom.routed_experts,
            experts_per_token=custom.experts_per_token,
            shared_experts=custom.shared_experts,
            expert_intermediate_size=custom.intermediate_size or 4 * custom.hidden_size,
        )
    if custom.active_params_b is not None and custom.active_params_b > custom.params_b:
        raise WorkloadError("workload.custom_model.active_params_b", "active_params_b exceeds params_b")
    head_dim = custom.head_dim or max(1, custom.hidden_size // custom.attention_heads)
    kv_heads = custom.attention_heads if custom.attention == "mha" else custom.kv_heads
    if custom.attention == "gqa" and kv_heads is None:
        raise WorkloadError("workload.custom_model.kv_heads", "attention 'gqa' needs kv_heads")
    if kv_heads is not None and kv_heads > custom.attention_heads:
        raise WorkloadError("workload.custom_model.kv_heads", "kv_heads exceeds attention_heads")
    mla = None
    if custom.attention == "mla":
        assert custom.kv_lora_rank is not None and custom.qk_rope_head_dim is not None
        mla = Mla(
            kv_lora_rank=custom.kv_lora_rank,
            qk_rope_head_dim=custom.qk_rope_head_dim,
            qk_nope_head_dim=max(1, head_dim - custom.qk_rope_head_dim),
            v_head_dim=head_dim,
        )
        kv_heads = None
    return LlmModel(
        id="custom",
        name=custom.name,
        family="custom",
        params_b=custom.params_b,
        active_params_b=custom.active_params_b if moe else None,
        layers=custom.layers,
        hidden_size=custom.hidden_size,
        intermediate_size=custom.intermediate_size or 4 * custom.hidden_size,
        attention_heads=custom.attention_heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        vocab_size=custom.vocab_size,
        max_context=custom.max_context,
        attention=custom.attention,
        moe=moe,
        mla=mla,
        sources=("described by the client",),
    )


def _llm(workload: LlmWorkload, catalog: Catalog) -> LlmModel:
    if (workload.model is None) == (workload.custom_model is None):
        raise WorkloadError("workload.model", "give either model (a catalog id or alias) or custom_model")
    if workload.custom_model is not None:
        return _custom_llm(workload.custom_model)
    assert workload.model is not None
    model = catalog.model(workload.model)
    if model is None:
        raise unknown_name(catalog, "model", workload.model, "workload.model")
    if not isinstance(model, LlmModel):
        raise WorkloadError("workload.model", f"{model.id} is an image model: describe it with kind 'image_generation'")
    return model


# The checkpoints' native formats map onto the precisions a client can ask for.
_NATIVE_PRECISION: dict[str, Precision] = {"fp32": "fp32", "bf16": "bf16", "fp16": "fp16", "fp8": "fp8", "mxfp4": "fp4"}


def _default_kv(workload: InferenceWorkload, llm: LlmModel) -> KvPrecision:
    """The KV-cache dtype the engine picks by default: TensorRT-LLM keeps FP8 checkpoints' cache in FP8."""
    precision = workload.precision or _NATIVE_PRECISION[llm.native_precision]
    return "fp8" if workload.engine == "trtllm" and precision == "fp8" else "bf16"


def use_case_targets(workload: InferenceWorkload) -> dict[str, float | None]:
    """The latency targets of the request: its own, or its use case's where it names none."""
    tpot, ttft = USE_CASE_TARGETS[workload.use_case]
    return {
        "max_tpot_ms": workload.max_tpot_ms if workload.max_tpot_ms is not None else tpot,
        "max_ttft_ms": workload.max_ttft_ms if workload.max_ttft_ms is not None else ttft,
    }


def normalise(workload: Workload, catalog: Catalog) -> Resolved:
    """Fill defaults and resolve the model; raise WorkloadError for what no GPU could fix."""
    if isinstance(workload, ImageGenerationWorkload):
        model = catalog.model(workload.model)
        if model is None:
            raise unknown_name(catalog, "model", workload.model, "workload.model")
        if not isinstance(model, DiffusionModel):
            raise WorkloadError("workload.model", f"{model.id} is a language model: use kind 'inference'")
        filled = msgspec.structs.replace(workload, model=model.id, steps=workload.steps or model.default_steps)
        return Resolved(filled, model)
    llm = _llm(workload, catalog)
    if isinstance(workload, InferenceWorkload):
        if workload.input_tokens + workload.output_tokens > llm.max_context:
            raise WorkloadError(
                "workload.input_tokens",
                f"input_tokens + output_tokens = {workload.input_tokens + workload.output_tokens} exceeds "
                f"{llm.name}'s context of {llm.max_context} tokens",
            )
        filled_inference = msgspec.structs.replace(
            workload,
            model=llm.id if workload.custom_model is None else None,
            precision=workload.precision or _NATIVE_PRECISION[llm.native_precision],
            kv_cache_precision=workload.kv_cache_precision or _default_kv(workload, llm),
            **use_case_targets(workload),
        )
        return Resolved(filled_inference, llm)
    # Training beyond the model's context is context extension, which is common: the planner warns instead.
    if workload.custom_model is None:
        return Resolved(msgspec.structs.replace(workload, model=llm.id), llm)
    return Resolved(workload, llm)
