"""Training memory per GPU: parameters, gradients and optimizer states by ZeRO stage, activations, LoRA adapters."""

from __future__ import annotations

import math
from dataclasses import dataclass

from domain.catalog import Gpu, LlmModel
from domain.performance.memory import BYTES_PER_PARAM, GIB, GPU_MEMORY_UTILIZATION, usable_memory_bytes


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
