"""Training layouts: tensor x pipeline x data parallel, ZeRO stage, micro-batch and recomputation, searched together.

Memory is checked before speed, and a layout whose compute alone (no recomputation, no exchange) is already slower
than the two best found is never sized: the search stays within a few evaluations per GPU and count.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from domain.catalog import LlmModel
from domain.hardware.nodes import GPUS_PER_NODE
from domain.performance.memo import Memo
from domain.performance.training import Shape, TrainingSpeed, virtual_stages
from domain.performance.training_memory import Activations, TrainingStates
from domain.workloads.requests import Lang

TENSOR_PARALLEL = (1, 2, 4, 8)
PIPELINE_PARALLEL = (1, 2, 4, 8, 16, 32)
# Layers each pipeline stage keeps at least (Llama 3 405B: 126 layers over 16 stages, ~8 each).
MIN_LAYERS_PER_STAGE = 4
MICRO_BATCHES = (1, 2, 4)
# Fits a request's layout search asks about: a few hundred shapes and usable sizes.
RECOMPUTES_KEPT = 4096


class Found(NamedTuple):
    """A layout of `gpus` GPUs and its expected hours."""

    gpus: int
    shape: Shape
    hours: float


class LayoutMemory:
    """Per-GPU memory of any layout of one model, method and sequence length (none of it depends on the GPU)."""

    def __init__(self, model: LlmModel, states: TrainingStates, activations: Activations, full: bool) -> None:
        self.layers = model.layers
        self.heads = model.attention_heads
        self.states = states
        self.acts = activations
        # Full training keeps 2-byte gradients of every weight; adapters' gradients are in their optimizer states.
        self.grads = states.weights if full else 0.0
        self.optimizer = states.optimizer - self.grads
        self.full = full
        # Pure functions of this model's memory (fixed above) and their arguments, asked layout after layout.
        self.recompute_needed = Memo(self._needed, RECOMPUTES_KEPT)
        self._activation_terms = Memo(self._activation_figures)

    def tensors(self, gpus: int) -> list[int]:
        """Tensor-parallel sizes inside one node that divide the GPUs and the attention heads."""
        limit = min(gpus, GPUS_PER_NODE)
        return [t for t in TENSOR_PARALLEL if t <= limit and not gpus % t and not self.heads % t]

    def pipelines(self, gpus: int, tensor: int) -> list[int]:
        """Pipeline stages that divide the GPUs left by tensor parallelism and keep a few layers each."""
        rest = gpus // tensor
        return [p for p in PIPELINE_PARALLEL if not rest % p and self.layers >= MIN_LAYERS_PER_STAGE * p]

    def stages(self, gpus: int, tensor: int, pipeline: int) -> tuple[int, ...]:
        """ZeRO stages worth trying for a layout."""
        # None without data parallelism; Megatron's distributed optimizer (1) with a pipeline; 1, 2 or 3 otherwise
        # (frozen LoRA weights: replicated or fully sharded).
        if gpus == tensor * pipeline:
            return (0,)
        if pipeline > 1:
            return (1,)
        return (1, 2, 3) if self.full else (0, 3)

    def state_bytes(self, gpus: int, shape: Shape) -> tuple[float, float, float]:
        """(weights, gradients, optimizer states) per GPU."""
        # A tensor x pipeline shard, split further over the data-parallel ranks by the ZeRO stage.
        model_shard = shape.tensor * shape.pipeline
        data = gpus // model_shard
        zero = shape.zero
        weights = self.states.weights / model_shard
        if zero == 3 and data > 1:
            # Sharded weights are gathered a layer at a time, two in flight with prefetching.
            weights = weights / data + self.states.gathered_layers / shape.tensor
        grads = self.grads / model_shard / (data if zero >= 2 else 1)
        optimizer = 0.0 if shape.offload else self.optimizer / model_shard / (data if zero >= 1 else 1)
        return weights, grads, optimizer

    def activation_bytes(self, shape: Shape) -> float:
        """Activations on the first pipeline stage, which holds the most micro-batches in flight."""
        kept, fixed, freed = self._activation_terms(shape.tensor, shape.pipeline, shape.micro_batch)
        recomputed = min(shape.recompute, -(-self.layers // shape.pipeline))
        live = self.acts.live_layer * shape.micro_batch / shape.tensor if recomputed else 0.0
        return kept - recomputed * freed + live + fixed

    def _needed(self, usable: float, gpus: int, shape: Shape) -> int:
        """The fewest recomputed layers per stage that fit in `usable` bytes (layers per stage + 1 if none does)."""
        per_stage = -(-self.layers // shape.pipeline)
        spare = usable - sum(self.state_bytes(gpus, shape))
        kept, fixed, freed_per_layer = self._activation_terms(shape.tensor, shape.pipeline, shape.micro_batch)
        if kept + fixed <= spare:
            return 0
        live = self.acts.live_layer * shape.micro_batch / shape.tensor
        excess = kept + fixed + live - spare
        needed = max(1, math.ceil(excess / freed_per_layer))
        return needed if needed <= per_stage else per_stage + 1

    def _inflight(self, pipeline: int) -> float:
        # 1F1B: the first stage holds p micro-batches; interleaving adds (p-1) / (p v) (Korthikanti et al. 2022).
        if pipeline == 1:
            return 1.0
        return pipeline * (1 + (pipeline - 1) / (pipeline * virtual_stages(self.layers, pipeline)))

    def _activation_figures(self, tensor: int, pipeline: int, micro_batch: int) -> tuple[float, float, float]:
        """(activations of the stage's layers kept in full, logits, bytes freed per recomputed layer)."""
        acts = self.acts
        split = micro_batch / tensor
        per_stage = -(-self.layers // pipeline)
        inflight = self._inflight(pipeline)
        kept = inflight * per_stage * acts.live_layer * split
        # The logits sit on the last stage, which holds one micro-batch of its layers: never the largest one.
        fixed = acts.logits * split if pipeline == 1 else 0.0
        freed = inflight * (acts.live_layer - 2.0 * acts.sequence_length * acts.hidden_size) * split
        return kept, fixed, freed


def fits_any(memory: LayoutMemory, usable: float, gpus: int, offload: bool) -> bool:
    """Whether some layout of `gpus` GPUs fits: the leanest ZeRO stage of every tensor and pipeline size."""
    # No layout holds less than an even share of the states: fewer GPUs than that need no search.
    states = memory.states.weights + memory.grads + (0.0 if offload else memory.optimizer)
    if states / gpus > usable:
        return False
    for tensor in memory.tensors(gpus):
        for pipeline in memory.pipelines(gpus, tensor):
            zero = memory.stages(gpus, tensor, pipeline)[-1]
            for off in (False, True) if offload and zero == 3 else (False,):
                shape = Shape(tensor, pipeline, zero, 1, 0, off)
                if memory.recompute_needed(usable, gpus, shape) <= -(-memory.layers // pipeline):
                    return True
    return False


def search(
    memory: LayoutMemory, speed: TrainingSpeed, usable: float, gpus: int, offload: bool
) -> tuple[Found, Found | None] | None:
    """The fastest layout of `gpus` GPUs that fits, and the next fastest (None if none fits)."""
    best: list[Found] = []
    layers = memory.layers

    def consider(shape: Shape) -> int | None:
        """Size and time one layout: its recomputed layers per stage, None when it does not fit."""
        recompute = memory.recompute_needed(usable, gpus, shape)
        if recompute > -(-layers // shape.pipeline):
            return None
        # Built directly: namedtuple's _replace (keywords mapped over the fields) took a third of a search's time.
        shape = Shape(shape.tensor, shape.pipeline, shape.zero, shape.micro_batch, recompute, shape.offload)
        compute, exposed = speed.seconds(
            gpus,
            shape.tensor,
            speed.gpu.interconnect.domain_gpus,
            shape.recomputed_layers(layers),
            shape.pipeline,
            1,
            shape.zero,
            shape.micro_batch,
            shape.offload,
        )
        found = Found(gpus, shape, (compute + exposed) / 3600)
        if not best or found.hours < best[0].hours:
            best.insert(0, found)
        elif len(best) == 1 or found.hours < best[1].hours:
            best[1:] = [found]
        del best[2:]
        return recompute

    bound = speed.compute_bound_hours
    for tensor in memory.tensors(gpus):
        # Tensor parallelism only costs: once the compute alone is slower than the runner-up, larger sizes are too.
        if len(best) == 2 and bound(gpus, tensor, 1) >= best[1].hours:
            break
        for pipeline in memory.pipelines(gpus, tensor):
            # The bubble grows with the stages: once it alone loses to the runner-up, more stages do too.
            if len(best) == 2 and bound(gpus, tensor, pipeline) >= best[1].hours:
                break
            for zero in memory.stages(gpus, tensor, pipeline):
                recompute = None
                # Larger micro-batches only shorten the per-micro-batch exchanges of ZeRO-2/3 (and need more memory).
                for micro_batch in MICRO_BATCHES if zero >= 2 else (1,):
                    recompute = consider(Shape(tensor, pipeline, zero, micro_batch, 0))
                    if recompute is None or recompute:
                        break
                # A lower stage that fits without recomputation exchanges no more than a higher one.
                if recompute == 0 and zero < 2:
                    break
    if not best and offload:
        for tensor in memory.tensors(gpus):
            if gpus > tensor:
                consider(Shape(tensor, 1, 3, 1, 0, True))
    if not best:
        return None
    return best[0], (best[1] if len(best) > 1 else None)


_ZERO_TEXT: dict[Lang, dict[int, str]] = {
    "en": {
        0: "no sharding",
        1: "ZeRO-1 (distributed optimizer)",
        2: "ZeRO-2 (gradients and optimizer sharded)",
        3: "ZeRO-3/FSDP (fully sharded)",
    },
    "zh": {0: "不分片", 1: "ZeRO-1（分布式优化器）", 2: "ZeRO-2（梯度与优化器状态分片）", 3: "ZeRO-3/FSDP（全分片）"},
}


def describe(shape: Shape, gpus: int, layers: int, lang: Lang) -> str:
    """The layout in a few words: parallel sizes, sharding, micro-batch and recomputation."""
    data = gpus // (shape.tensor * shape.pipeline)
    per_stage = -(-layers // shape.pipeline)
    en = lang == "en"
    parts = [
        (
            f"TP{shape.tensor} x PP{shape.pipeline} x DP{data}"
            if en
            else f"张量并行 {shape.tensor} x 流水线并行 {shape.pipeline} x 数据并行 {data}"
        )
    ]
    if data > 1:
        parts.append(
            _ZERO_TEXT[lang][shape.zero] + ((" + CPU offload" if en else " + CPU 卸载") if shape.offload else "")
        )
    parts.append(f"micro-batch {shape.micro_batch}" if en else f"微批次 {shape.micro_batch}")
    if shape.recompute >= per_stage:
        parts.append("full recompute" if en else "全部重计算")
    elif shape.recompute:
        parts.append(
            f"{shape.recompute} of {per_stage} layers per stage recomputed"
            if en
            else f"每级 {per_stage} 层中 {shape.recompute} 层重计算"
        )
    else:
        parts.append("no recompute" if en else "不重计算")
    return ", ".join(parts) if en else "，".join(parts)
