"""Serving and diffusion memory: weights, KV cache, runtime reserve, usable memory per GPU, diffusion pipelines."""

from __future__ import annotations

import math
from dataclasses import dataclass

from domain.catalog import DiffusionModel, Gpu, LlmModel

GB = 1e9
GIB = 2**30

# Bytes per parameter including quantization scales.
BYTES_PER_PARAM: dict[str, float] = {
    "fp32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.53,  # GPTQ/AWQ group-128
    "fp4": 0.531,  # MXFP4 (NVFP4 would be 0.5625)
    "nf4": 0.516,  # QLoRA NF4 with double quantisation
}
KV_BYTES: dict[str, float] = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0}

# Serving engines allocate this share of the memory they can see (vLLM/SGLang gpu_memory_utilization).
GPU_MEMORY_UTILIZATION = 0.90
# The most sequences in flight any engine here runs per model copy (vLLM's max_num_seqs on large GPUs).
MAX_BATCH = 1024


def usable_memory_bytes(gpu: Gpu) -> float:
    """Memory a runtime can allocate on the GPU."""
    # Datasheet "GB" of HBM are GiB (H100 shows ~79.6 GiB); ECC, on by default on professional GDDR cards, takes ~6% (an
    # L40S shows ~45 GiB); GeForce cards run without it.
    if gpu.memory_type.upper().startswith("HBM"):
        return (gpu.memory_gb - 0.5) * GIB
    return gpu.memory_gb * (1.0 if gpu.segment == "consumer" else 0.94) * GIB


def weights_bytes(model: LlmModel, precision: str) -> float:
    """All weights of the model at this precision."""
    return model.params_b * 1e9 * BYTES_PER_PARAM[precision]


def moe_split(model: LlmModel) -> tuple[float, float]:
    """(always-read parameters, parameters of one routed expert summed over all MoE layers), in parameters."""
    # Derived from total and active counts, so it holds for any MoE layout: total = base + E x e, active = base + k x e.
    if model.moe is None or model.active_params_b is None or model.moe.routed_experts <= model.moe.experts_per_token:
        return model.params_b * 1e9, 0.0
    experts, top_k = model.moe.routed_experts, model.moe.experts_per_token
    per_expert = (model.params_b - model.active_params_b) * 1e9 / (experts - top_k)
    return model.params_b * 1e9 - experts * per_expert, per_expert


def experts_touched(model: LlmModel, tokens: float) -> float:
    """Expected routed experts a step of `tokens` tokens reads per layer, with uniform top-k routing."""
    if model.moe is None:
        return 0.0
    experts, top_k = model.moe.routed_experts, model.moe.experts_per_token
    return experts * (1 - (1 - top_k / experts) ** max(tokens, 0.0))


def active_params(model: LlmModel) -> float:
    """Parameters used per token."""
    return (model.active_params_b or model.params_b) * 1e9


def matmul_params(model: LlmModel) -> float:
    """Parameters a token is multiplied through: the active ones less an untied input embedding, a row lookup."""
    # Parameter counts hold both vocab x hidden matrices of an untied model, but only the output head is a GEMM
    # (Narayanan et al. 2021, arXiv:2104.04473, section 5.1: the logit layer's 6 x B x s x h x V FLOPs, none for the
    # input embedding). For Llama 3 8B the lookup is 0.53B of its 8.03B parameters.
    lookup = 0.0 if model.tied_embeddings else float(model.vocab_size * model.hidden_size)
    return active_params(model) - lookup


def kv_elements_per_token_layer(model: LlmModel, tensor_parallel: int) -> float:
    """KV elements one GPU holds per token and layer under tensor parallelism."""
    # GQA/MHA heads are split across GPUs but never below one head per GPU; MLA's latent is shared by all heads, so
    # tensor parallelism replicates it whole on every GPU.
    if model.mla is not None:
        return float(model.mla.kv_lora_rank + model.mla.qk_rope_head_dim)
    kv_heads = model.kv_heads or model.attention_heads
    return 2.0 * math.ceil(kv_heads / tensor_parallel) * model.head_dim


# Share of the attention layers that use the sliding window.
_WINDOWED_SHARE = {"all": 1.0, "alternate": 0.5, "five_of_six": 5 / 6}


def kv_cache_layers(model: LlmModel) -> int:
    """Layers that keep a KV cache: all but the linear-attention ones."""
    return model.layers - model.linear_attention_layers


def kv_bytes_per_token(model: LlmModel, kv_precision: str) -> float:
    """KV cache of one token across all layers on a single GPU (the textbook per-token figure)."""
    return kv_cache_layers(model) * kv_elements_per_token_layer(model, 1) * KV_BYTES[kv_precision]


def kv_bytes_per_sequence(
    model: LlmModel, kv_precision: str, tokens: float, tensor_parallel: int = 1, pipeline: int = 1
) -> float:
    """KV cache one GPU holds for one sequence of `tokens` tokens; sliding-window layers stop at the window."""
    per_token_layer = kv_elements_per_token_layer(model, tensor_parallel) * KV_BYTES[kv_precision]
    layers = math.ceil(kv_cache_layers(model) / pipeline)
    if model.sliding_window is None:
        return layers * per_token_layer * tokens
    windowed = math.floor(layers * _WINDOWED_SHARE[model.sliding_window_layers or "all"])
    return per_token_layer * ((layers - windowed) * tokens + windowed * min(tokens, model.sliding_window))


def runtime_reserve_bytes(model: LlmModel) -> float:
    """Per-GPU memory the engine needs besides weights and KV (context, activations, CUDA graphs)."""
    if model.moe is not None and model.params_b > 100:
        return 6 * GIB
    return 2 * GIB if model.params_b <= 70 else 3 * GIB


@dataclass(frozen=True)
class InferenceMemory:
    """Per-GPU memory of one model instance (tensor x pipeline GPUs)."""

    usable_bytes: float
    weights_bytes: float
    reserve_bytes: float
    kv_bytes_per_sequence: float
    max_concurrency: int

    @property
    def fits(self) -> bool:
        return self.max_concurrency >= 1

    @property
    def kv_free_bytes(self) -> float:
        return self.usable_bytes - self.weights_bytes - self.reserve_bytes


def inference_memory(
    model: LlmModel,
    gpu: Gpu,
    precision: str,
    kv_precision: str,
    sequence_tokens: int,
    tensor_parallel: int,
    pipeline: int,
) -> InferenceMemory:
    """Whether the model loads, and how many sequences of `sequence_tokens` fit beside it."""
    shape = InstanceShape.of(model, precision, kv_precision, sequence_tokens, tensor_parallel, pipeline)
    return shape.memory(usable_memory_bytes(gpu))


@dataclass(frozen=True, slots=True)
class InstanceShape:
    """Per-GPU weights, runtime reserve and KV cache per sequence of one copy; how many GPUs hold separate caches."""

    # Separate requests' caches are held by the copy's GPUs under data-parallel attention, else by one group. None of it
    # depends on the GPU, so a search over GPUs computes it once per layout.

    weights_bytes: float
    reserve_bytes: float
    kv_bytes_per_sequence: float
    cache_groups: int = 1

    @classmethod
    def of(
        cls,
        model: LlmModel,
        precision: str,
        kv_precision: str,
        sequence_tokens: int,
        tensor_parallel: int,
        pipeline: int,
        *,
        expert_parallel: int = 1,
        dp_attention: bool = False,
    ) -> InstanceShape:
        if dp_attention:
            # Attention and dense weights on every GPU, routed experts split over the copy's GPUs; each GPU holds
            # the whole latent cache of its own requests.
            base, per_expert = moe_split(model)
            experts = model.moe.routed_experts if model.moe else 0
            weights = (base + experts * per_expert / expert_parallel) * BYTES_PER_PARAM[precision] / pipeline
            per_sequence = kv_bytes_per_sequence(model, kv_precision, sequence_tokens, 1, pipeline)
            return cls(weights, runtime_reserve_bytes(model), per_sequence, expert_parallel)
        per_sequence = kv_bytes_per_sequence(model, kv_precision, sequence_tokens, tensor_parallel, pipeline)
        return cls(
            weights_bytes=weights_bytes(model, precision) / (tensor_parallel * pipeline),
            reserve_bytes=runtime_reserve_bytes(model),
            kv_bytes_per_sequence=per_sequence,
        )

    def memory(self, gpu_usable_bytes: float) -> InferenceMemory:
        """The copy on GPUs with this usable memory (`usable_memory_bytes`), of which the engine takes its share."""
        return InferenceMemory(
            usable_bytes=GPU_MEMORY_UTILIZATION * gpu_usable_bytes,
            weights_bytes=self.weights_bytes,
            reserve_bytes=self.reserve_bytes,
            kv_bytes_per_sequence=self.kv_bytes_per_sequence,
            max_concurrency=self.max_concurrency(gpu_usable_bytes),
        )

    def max_concurrency(self, gpu_usable_bytes: float) -> int:
        """Sequences whose KV cache fits beside the weights: `memory(...).max_concurrency`, without building it."""
        per_sequence = self.kv_bytes_per_sequence
        free = GPU_MEMORY_UTILIZATION * gpu_usable_bytes - self.weights_bytes - self.reserve_bytes
        return self.cache_groups * max(0, int(free // per_sequence)) if per_sequence > 0 else 0


def diffusion_scale(width: int, height: int) -> float:
    """Cost of a pass at this size relative to 1024x1024: 4x the pixels cost ~4.3x (attention grows faster)."""
    return ((width * height) / (1024 * 1024)) ** 1.05


@dataclass(frozen=True)
class DiffusionMemory:
    """Per-GPU memory of one pipeline."""

    usable_bytes: float
    weights_bytes: float
    activations_bytes: float

    @property
    def required_bytes(self) -> float:
        return self.weights_bytes + self.activations_bytes

    @property
    def fits(self) -> bool:
        return self.required_bytes <= self.usable_bytes


def diffusion_memory(model: DiffusionModel, gpu: Gpu, precision: str, width: int, height: int) -> DiffusionMemory:
    """Denoiser, text encoders and VAE resident on one GPU, plus activations growing with the image."""
    return DiffusionPipeline.of(model, precision, width, height).memory(usable_memory_bytes(gpu))


@dataclass(frozen=True, slots=True)
class DiffusionPipeline:
    """Weights and activations of one pipeline at one image size: none of it depends on the GPU."""

    # A search over GPUs computes this once instead of once per GPU.

    weights_bytes: float
    activations_bytes: float

    @classmethod
    def of(cls, model: DiffusionModel, precision: str, width: int, height: int) -> DiffusionPipeline:
        params = model.denoiser.params_b + sum(e.params_b for e in model.text_encoders) + model.vae_params_b
        # Text encoders and the VAE stay in 16-bit when the denoiser is quantised.
        denoiser_bytes = model.denoiser.params_b * 1e9 * BYTES_PER_PARAM[precision]
        rest_bytes = (params - model.denoiser.params_b) * 1e9 * max(BYTES_PER_PARAM[precision], 2.0)
        activations = 1.5 * GB * diffusion_scale(width, height) + 1 * GIB
        return cls(weights_bytes=denoiser_bytes + rest_bytes, activations_bytes=activations)

    def memory(self, gpu_usable_bytes: float) -> DiffusionMemory:
        """The pipeline on a GPU with this usable memory (`usable_memory_bytes`)."""
        return DiffusionMemory(
            usable_bytes=gpu_usable_bytes, weights_bytes=self.weights_bytes, activations_bytes=self.activations_bytes
        )
