"""A workload resolved against the catalog: names checked, a pasted model built, defaults filled."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import msgspec

from domain.catalog import (
    Catalog,
    DiffusionModel,
    LlmModel,
    Mla,
    ModelSpec,
    MoE,
)
from domain.catalog.hf_config import HfConfigError, llm_from_hf_config
from domain.workloads.requests import (
    USE_CASE_TARGETS,
    CustomModel,
    ImageGenerationWorkload,
    InferenceWorkload,
    KvPrecision,
    LlmWorkload,
    Precision,
    Workload,
)


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
        tied_embeddings=custom.tied_embeddings,
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
