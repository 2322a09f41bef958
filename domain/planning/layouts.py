"""The layouts an engineer would try for one model copy: tensor, pipeline and expert parallel, and the batch."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from domain.catalog import LlmModel
from domain.hardware.nodes import GPUS_PER_NODE
from domain.performance.layout import Layout
from domain.performance.memo import Memo
from domain.performance.memory import InferenceMemory, InstanceShape

TENSOR_PARALLEL = (1, 2, 4, 8)
# Expert-parallel groups: one node, two, four (wide EP across nodes, or inside one NVL72 rack).
EXPERT_GROUPS = (2, 4, 8, 16, 32)

# Usable-memory sizes a request's layouts are asked about: the catalog has a few dozen.
MEMORIES_KEPT = 1024


def candidate_layouts(model: LlmModel, max_gpus: int, fixed: int | None, domain: int = GPUS_PER_NODE) -> list[Layout]:
    """Every layout of one copy worth trying."""
    # TP 1-8 inside the NVLink domain, pipeline stages inside it or across nodes (TP8 per node), expert parallel for MoE
    # (with data-parallel attention for MLA models; otherwise tensor and expert groups as wide as the domain).
    layouts: list[Layout] = []

    def allowed(layout: Layout) -> bool:
        gpus = layout.gpus
        return gpus <= max_gpus and (fixed is None or not fixed % gpus)

    for tensor in TENSOR_PARALLEL:
        if model.attention_heads % tensor:
            continue
        for pipeline in (1, 2, 4):
            if tensor * pipeline > domain or pipeline > model.layers:
                continue
            layouts.append(Layout(tensor=tensor, pipeline=pipeline))
    nodes = 2
    while nodes * GPUS_PER_NODE <= max_gpus and nodes <= model.layers:
        if not model.attention_heads % GPUS_PER_NODE:
            layouts.append(Layout(tensor=GPUS_PER_NODE, pipeline=nodes))
        nodes *= 2
    if model.moe is not None:
        for group in EXPERT_GROUPS:
            if group > model.moe.routed_experts:
                break
            if model.mla is not None:
                layouts.append(Layout(tensor=1, expert=group, dp_attention=True))
            elif group <= domain and not model.attention_heads % group:
                layouts.append(Layout(tensor=group, expert=group))
    # In a domain wider than a node, TP8 x PP2 is both a pipeline inside the domain and one across nodes.
    return list(dict.fromkeys(layout for layout in layouts if allowed(layout)))


@dataclass(frozen=True, slots=True)
class Sized:
    """A layout and its per-GPU memory figures, which do not depend on the GPU."""

    layout: Layout
    shape: InstanceShape


class InferenceLayouts:
    """A request's layouts and their memory shapes, and the ones that fit by usable GPU memory."""

    # Inference memory depends on the GPU only through its usable memory, so GPUs with equal memory share the layouts
    # found for the first of them.

    def __init__(
        self,
        model: LlmModel,
        precision: str,
        kv_precision: str,
        tokens: int,
        layouts: list[Layout],
    ) -> None:
        self.sized = [
            Sized(
                layout,
                InstanceShape.of(
                    model,
                    precision,
                    kv_precision,
                    tokens,
                    layout.tensor,
                    layout.pipeline,
                    expert_parallel=layout.expert,
                    dp_attention=layout.dp_attention,
                ),
            )
            for layout in layouts
        ]
        # Pure functions of the layouts (fixed above) and their arguments, asked for GPU after GPU.
        # Keyed by the layout: hashing a whole memory shape would cost more than the answer.
        self._shapes = {sized.layout: sized.shape for sized in self.sized}
        self._memory = Memo(self._layout_memory, MEMORIES_KEPT)
        self.fitting = Memo(self._fitting, MEMORIES_KEPT)

    def memory(self, sized: Sized, usable_bytes: float) -> InferenceMemory:
        """The memory of one copy of this layout on GPUs with this usable memory."""
        return self._memory(sized.layout, usable_bytes)  # type: ignore[no-any-return]

    def _layout_memory(self, layout: Layout, usable_bytes: float) -> InferenceMemory:
        return self._shapes[layout].memory(usable_bytes)

    def _fitting(self, usable_bytes: float) -> list[Sized]:
        """The layouts that hold at least one sequence on GPUs with this usable memory, fewest GPUs first."""
        return sorted(
            (s for s in self.sized if s.shape.max_concurrency(usable_bytes) >= 1),
            key=lambda s: (s.layout.gpus, s.layout.pipeline, s.layout.expert),
        )


def largest_batch(capacity: int, ok: Callable[[int], bool]) -> int:
    """The largest batch up to `capacity` that passes a test monotone in the batch (0 if none)."""
    if capacity <= 0 or not ok(1):
        return 0
    if ok(capacity):
        return capacity
    low, high = 1, capacity - 1
    while low < high:
        middle = (low + high + 1) // 2
        if ok(middle):
            low = middle
        else:
            high = middle - 1
    return low


def smallest_batch(capacity: int, enough: Callable[[int], bool]) -> int | None:
    """The smallest batch up to `capacity` that passes a test monotone in the batch (None if none)."""
    if capacity <= 0 or not enough(capacity):
        return None
    low, high = 1, capacity
    while low < high:
        middle = (low + high) // 2
        if enough(middle):
            high = middle
        else:
            low = middle + 1
    return low
