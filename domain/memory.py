"""Memory sizing: weights, KV cache, runtime reserve, activations, optimizer states, LoRA, diffusion pipelines."""

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


def lora_params(model: LlmModel, rank: int) -> float:
    """Adapter parameters for LoRA on every attention and MLP projection of every layer."""
    hidden = model.hidden_size
    q_out = model.attention_heads * model.head_dim
    kv_out = (model.kv_heads or model.attention_heads) * model.head_dim
    attention = rank * ((hidden + q_out) + 2 * (hidden + kv_out) + (q_out + hidden))
    mlp_inner = model.moe.expert_intermediate_size if model.moe else model.intermediate_size
    mlp = rank * 3 * (hidden + mlp_inner)
    return model.layers * (attention + mlp)


# Bytes per trainable parameter: bf16 weights 2 + bf16 grads 2 + fp32 master, m and v 12; 8-bit Adam keeps m, v in
# 1 byte each plus fp32 master (12 -> 6).
STATE_BYTES = {"adamw": 16.0, "adamw_8bit": 10.0}
PAGED_STATE_BYTES = 4.0


@dataclass(frozen=True)
class TrainingMemory:
    """Per-GPU memory of a data-parallel (ZeRO-3/FSDP) training configuration."""

    usable_bytes: float
    weights_bytes: float
    optimizer_bytes: float
    activations_bytes: float

    @property
    def required_bytes(self) -> float:
        return self.weights_bytes + self.optimizer_bytes + self.activations_bytes

    @property
    def fits(self) -> bool:
        return self.required_bytes <= self.usable_bytes


def activation_bytes(model: LlmModel, sequence_length: int, tensor_parallel: int, recompute_layers: int) -> float:
    """Activations of one sequence (micro-batch 1) on one GPU, tensor/sequence parallel over tensor_parallel GPUs."""
    # Korthikanti et al. 2022 (arXiv:2205.05198, Table 2): with tensor and sequence parallelism and the attention core
    # not stored (FlashAttention, like their selective recomputation) a layer keeps 34 s b h / t bytes; a fully
    # recomputed layer keeps only its 2 s h input, plus one layer live while it is recomputed (Megatron's
    # recompute-num-layers). Logits add s x vocab x 6 bytes.
    return Activations(model, sequence_length).bytes(tensor_parallel, recompute_layers)


def recompute_layers_needed(model: LlmModel, spare_bytes: float, sequence_length: int, tensor_parallel: int) -> int:
    """The fewest fully recomputed layers that bring activations within `spare_bytes` (layers + 1 if impossible)."""
    return Activations(model, sequence_length).recompute_layers_needed(spare_bytes, tensor_parallel)


class Activations:
    """Activation memory of one model at one sequence length: the figures that do not depend on the layout."""

    # A search over tensor-parallel sizes and recomputation builds this once instead of once per layout.

    __slots__ = (
        "_all_recomputed",
        "_freed_per_layer",
        "_none_recomputed",
        "hidden_size",
        "layers",
        "live_layer",
        "logits",
        "sequence_length",
    )

    def __init__(self, model: LlmModel, sequence_length: int) -> None:
        s, h = sequence_length, model.hidden_size
        self.layers = model.layers
        self.sequence_length = s
        self.hidden_size = h
        # A layer that keeps its activations. The paper counts a GPT layer; counted its way, a SwiGLU layer with
        # ffn f and GQA (norms 4, attention 6 + 4 kv/heads, MLP 2 + 6 f/h, no dropout) keeps 32-34 s h as well.
        self.live_layer = 34.0 * s * h
        self.logits = s * model.vocab_size * 6.0
        self._freed_per_layer = 32.0 * s * h
        # The two ends of every search, before the tensor-parallel split.
        self._none_recomputed = self._unsplit(0)
        self._all_recomputed = self._unsplit(self.layers)

    def _unsplit(self, recompute_layers: int) -> float:
        s, h, live = self.sequence_length, self.hidden_size, self.live_layer
        kept = (self.layers - recompute_layers) * live + recompute_layers * 2.0 * s * h
        if recompute_layers:
            kept += live
        return kept + self.logits

    def bytes(self, tensor_parallel: int, recompute_layers: int) -> float:
        """Activations on one GPU with `recompute_layers` layers fully recomputed (see `activation_bytes`)."""
        return self._unsplit(recompute_layers) / tensor_parallel

    def recompute_layers_needed(self, spare_bytes: float, tensor_parallel: int) -> int:
        """The fewest fully recomputed layers that bring activations within `spare_bytes` (layers + 1 if impossible)."""
        none_recomputed = self._none_recomputed / tensor_parallel
        if none_recomputed <= spare_bytes:
            return 0
        # Each recomputed layer frees 32 s h bytes; the first also costs one live layer.
        if self._all_recomputed / tensor_parallel > spare_bytes:
            return self.layers + 1
        excess = none_recomputed + self.live_layer / tensor_parallel - spare_bytes
        return min(self.layers, max(1, math.ceil(excess / (self._freed_per_layer / tensor_parallel))))


@dataclass(frozen=True, slots=True)
class TrainingStates:
    """Weights and optimizer states of one model and method, before sharding over GPUs (ZeRO-3/FSDP)."""

    # A search over GPU counts and tensor-parallel sizes builds this once instead of once per layout.

    weights: float  # every parameter at its stored precision
    gathered_layers: float  # the full bf16 weights of the layers in flight, before the tensor-parallel split
    optimizer: float  # gradients, master weights and moments of the trainable parameters

    @classmethod
    def of(cls, model: LlmModel, *, method: str, optimizer: str, lora_rank: int = 16) -> TrainingStates:
        params = model.params_b * 1e9
        # ZeRO-3 gathers a layer's full weights before using it; two layers are in flight with prefetching.
        gathered = 2 * params / model.layers * 2.0
        if method in ("lora", "qlora"):
            base_bytes = BYTES_PER_PARAM["nf4" if method == "qlora" else "bf16"]
            adapters = lora_params(model, lora_rank)
            # QLoRA pages the adapters' optimizer states to CPU memory (Dettmers et al. 2023): the GPU keeps their
            # bf16 weights and gradients only.
            per_adapter = PAGED_STATE_BYTES if method == "qlora" else STATE_BYTES[optimizer]
            return cls(params * base_bytes, gathered, adapters * per_adapter)
        return cls(params * 2.0, gathered, params * (STATE_BYTES[optimizer] - 2.0))

    def weights_bytes(self, gpus: int, tensor_parallel: int) -> float:
        """Weights per GPU: a 1/gpus shard plus the gathered layers when data parallelism shards them."""
        gathered = self.gathered_layers / tensor_parallel if gpus > tensor_parallel else 0.0
        return self.weights / gpus + gathered

    def optimizer_bytes(self, gpus: int) -> float:
        """Optimizer states per GPU."""
        return self.optimizer / gpus


def compared_bytes(kind: str, gpu: Gpu) -> float:
    """The memory per GPU a workload of this kind is checked against: what answers show as capacity."""
    if kind == "inference":
        return GPU_MEMORY_UTILIZATION * usable_memory_bytes(gpu)
    if kind in ("training", "fine_tuning"):
        return training_usable_bytes(gpu)
    return usable_memory_bytes(gpu)


def training_usable_bytes(gpu: Gpu) -> float:
    """Memory a training configuration may fill: the usable memory less 1 GiB (CUDA context, NCCL buffers)."""
    return usable_memory_bytes(gpu) - 1 * GIB


def training_memory(
    model: LlmModel,
    gpu: Gpu,
    *,
    method: str,
    optimizer: str,
    sequence_length: int,
    gpus: int,
    tensor_parallel: int,
    recompute_layers: int,
    lora_rank: int = 16,
) -> TrainingMemory:
    """Per-GPU memory with parameters, gradients and optimizer states sharded over all GPUs (ZeRO-3/FSDP)."""
    states = TrainingStates.of(model, method=method, optimizer=optimizer, lora_rank=lora_rank)
    return TrainingMemory(
        usable_bytes=training_usable_bytes(gpu),
        weights_bytes=states.weights_bytes(gpus, tensor_parallel),
        optimizer_bytes=states.optimizer_bytes(gpus),
        activations_bytes=Activations(model, sequence_length).bytes(tensor_parallel, recompute_layers),
    )


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
