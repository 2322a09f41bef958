"""Workload models (language models and diffusion pipelines) as the catalog sends them."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from api.schemas.base import Wire


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
    tied_embeddings: Annotated[
        bool,
        msgspec.Meta(
            description="One vocab x hidden matrix serves as input embedding and output head (tie_word_embeddings); "
            "an untied model holds two, and its FLOPs per token leave the input one (a lookup) out."
        ),
    ]
    qkv_bias: Annotated[bool, msgspec.Meta(description="The query, key and value projections carry biases (Qwen2).")]
    qk_norm: Annotated[
        bool, msgspec.Meta(description="Each query and key head is RMS-normalised before attention (Qwen3, Gemma 3).")
    ]
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
