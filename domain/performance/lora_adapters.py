"""LoRA's adapter branches: memory-bound passes over each adapted layer's input and output, beside the frozen GEMMs."""

from __future__ import annotations

from typing import Literal, NamedTuple

from domain.catalog import Gpu, LlmModel
from domain.hardware.efficiency import Scenario, factor
from domain.performance.memo import Memo

# The linear layers a run adapts: the fused query-key-value projection alone (NeMo's performance fine-tuning recipes set
# target_modules = ['linear_qkv']) or every linear layer of the decoder (the TRL command's --lora_target_modules
# all-linear; PEFT leaves the output head out).
AdapterTargets = Literal["qkv", "all_linear"]

# 2-byte elements an adapter branch moves per token, per element of its layer's input and output width. Forward: A reads
# the input (1 in); B writes its output, which is scaled (read, write) and added to the frozen layer's (read two,
# write one): 6 out. Backward: the output gradient is scaled (read, write) and read by B's two GEMMs (4 out); A writes
# the input gradient, reads the input again for its weight gradient, and the input gradient is added to the frozen
# layer's (read two, write one): 5 in. Counted from NeMo 2.1's LoRALinear and ParallelLinearAdapter
# (github.com/NVIDIA/NeMo/blob/633cb602777bffefbe12066b0c915c87e7b469e9/nemo/collections/llm/peft/lora.py,
# nemo/collections/nlp/modules/common/megatron/adapters/parallel_adapters.py), which PEFT's lora.Linear runs alike.
PASSES_IN, PASSES_OUT = 6, 10
FORWARD_IN, FORWARD_OUT = 1, 6  # the forward's share: what recomputing a layer repeats
# A dropout on the input (TRL's LoRA) writes a copy of it forward and reads and writes its gradient backward.
DROPOUT_PASSES_IN, DROPOUT_FORWARD_IN = 4, 2
# The TRL command's adapters: every linear layer, behind TRL's default dropout (ModelConfig.lora_dropout, 0.05,
# github.com/huggingface/trl, trl/trainer/model_config.py), which the command also sets.
TRL_TARGETS: AdapterTargets = "all_linear"
TRL_DROPOUT = 0.05
# Adapted modules per layer whose sequence-parallel input is gathered (or output scattered) once more for the adapter,
# forward and backward, in Megatron-Core's four linear modules of a layer (ParallelLinearAdapter under sequence
# parallelism).
EXCHANGING_MODULES: dict[AdapterTargets, int] = {"qkv": 1, "all_linear": 4}


class Adapted(NamedTuple):
    """An adapted linear layer: its widths, how many a token passes through, and how tensor parallelism splits it."""

    inputs: int
    outputs: int
    per_token: float
    column: bool  # column-parallel: every tensor-parallel rank reads the whole input and writes a slice of the output


def adapted_layers(model: LlmModel, targets: AdapterTargets) -> tuple[Adapted, ...]:
    """The linear layers a token passes through that carry an adapter, over the whole model."""
    layers = float(model.layers)
    if targets == "qkv":
        return _fused_qkv(model, layers)
    return _attention(model, layers) + _mlp(model, layers)


def adapter_bytes(
    adapted: tuple[Adapted, ...], tensor_parallel: int, *, dropout: bool, forward_only: bool = False
) -> float:
    """Bytes one tensor-parallel rank's adapter branches move per token over the whole model."""
    passes_in = (FORWARD_IN if forward_only else PASSES_IN) + (
        (DROPOUT_FORWARD_IN if forward_only else DROPOUT_PASSES_IN) if dropout else 0
    )
    passes_out = FORWARD_OUT if forward_only else PASSES_OUT
    total = 0.0
    for item in adapted:
        inputs = item.inputs if item.column else item.inputs / tensor_parallel
        outputs = item.outputs / tensor_parallel if item.column else item.outputs
        total += item.per_token * 2.0 * (passes_in * inputs + passes_out * outputs)
    return total


def _fused_qkv(model: LlmModel, layers: float) -> tuple[Adapted, ...]:
    # Megatron-Core's linear_qkv: one module, one adapter, the input read once. Multi-head latent attention has no
    # fused projection: its input-side projections stand in.
    if model.mla is not None:
        return tuple(item for item in _attention(model, layers) if item.inputs == model.hidden_size)
    kv = (model.kv_heads or model.attention_heads) * model.head_dim
    return (Adapted(model.hidden_size, model.attention_heads * model.head_dim + 2 * kv, layers, True),)


def _attention(model: LlmModel, layers: float) -> tuple[Adapted, ...]:
    # PEFT's modules, each with its own adapter: q, k and v each read the layer's input.
    hidden, heads = model.hidden_size, model.attention_heads
    latent = model.mla
    if latent is None:
        kv = (model.kv_heads or heads) * model.head_dim
        query = heads * model.head_dim
        return (
            Adapted(hidden, query, layers, True),
            Adapted(hidden, kv, layers, True),
            Adapted(hidden, kv, layers, True),
            Adapted(query, hidden, layers, False),
        )
    head = latent.qk_nope_head_dim + latent.qk_rope_head_dim
    rank = latent.q_lora_rank
    queries = (
        (Adapted(hidden, rank, layers, True), Adapted(rank, heads * head, layers, True))
        if rank
        else (Adapted(hidden, heads * head, layers, True),)
    )
    return (
        *queries,
        Adapted(hidden, latent.kv_lora_rank + latent.qk_rope_head_dim, layers, True),
        Adapted(latent.kv_lora_rank, heads * (latent.qk_nope_head_dim + latent.v_head_dim), layers, True),
        Adapted(heads * latent.v_head_dim, hidden, layers, False),
    )


def _mlp(model: LlmModel, layers: float) -> tuple[Adapted, ...]:
    hidden = model.hidden_size
    experts = model.moe
    if experts is None:
        return _gated(hidden, model.intermediate_size, layers)
    dense = float(experts.first_dense_layers)
    # A token passes through its routed experts and the shared ones, each a gated MLP of the expert width.
    through = (layers - dense) * (experts.experts_per_token + experts.shared_experts)
    return _gated(hidden, model.intermediate_size, dense) + _gated(hidden, experts.expert_intermediate_size, through)


def _gated(hidden: int, width: int, count: float) -> tuple[Adapted, ...]:
    # gate, up and down projections, each its own module
    if count <= 0:
        return ()
    return (
        Adapted(hidden, width, count, True),
        Adapted(hidden, width, count, True),
        Adapted(width, hidden, count, False),
    )


class AdapterCost:
    """A run's adapter branches on one GPU: the bytes they move and the memory bandwidth they move them at."""

    __slots__ = ("_moved", "adapted", "bandwidth", "bytes_per_s", "dropout", "targets")

    def __init__(
        self, model: LlmModel, gpu: Gpu, targets: AdapterTargets, *, dropout: bool, scenario: Scenario
    ) -> None:
        self.targets = targets
        self.adapted = adapted_layers(model, targets)
        self.dropout = dropout
        # Streaming kernels reach the share of the memory bandwidth a dense decode step does.
        self.bandwidth = factor(gpu, "decode_mbu_dense")
        self.bytes_per_s = gpu.memory_bandwidth_gbps * 1e9 * self.bandwidth.at(scenario)
        # (whole step, forward alone) bytes by tensor-parallel size: a layout search asks for the same few sizes.
        self._moved = Memo(self._bytes)

    @property
    def exchanging(self) -> int:
        """Adapted modules per layer whose sequence-parallel input Megatron-Core gathers once more for the adapter."""
        return EXCHANGING_MODULES[self.targets]

    def bytes_per_token(self, tensor_parallel: int) -> float:
        """Bytes one tensor-parallel rank's branches move per token over the whole model."""
        return self._moved(tensor_parallel)[0]  # type: ignore[no-any-return]

    def _bytes(self, tensor_parallel: int) -> tuple[float, float]:
        return (
            adapter_bytes(self.adapted, tensor_parallel, dropout=self.dropout),
            adapter_bytes(self.adapted, tensor_parallel, dropout=self.dropout, forward_only=True),
        )

    def seconds(self, tokens: float, gpus: int, tensor_parallel: int, recomputed_share: float) -> float:
        """Seconds each GPU spends in the branches for `tokens` tokens, recomputed layers repeating the forward."""
        # A GPU holds 1 / pipeline of the layers and sees tensor x pipeline / gpus of the tokens, whole after the
        # tensor-parallel gather: the pipeline cancels.
        step, forward = self._moved(tensor_parallel)
        moved = step + recomputed_share * forward
        return tokens * tensor_parallel / gpus * moved / self.bytes_per_s
