"""The inference planner's shared types: a request's sizing, a model copy and a layout choice."""

from __future__ import annotations

from dataclasses import dataclass

from domain.catalog import Gpu, LlmModel
from domain.hardware.nodes import GPUS_PER_NODE
from domain.performance.engines import ENGINES
from domain.performance.layout import Layout, ServingPoint
from domain.performance.memo import Memo
from domain.performance.memory import InferenceMemory
from domain.performance.serving import InstanceSpeed
from domain.planning.facts import SHARED, CopyFact, InferenceCheck, LayoutsFact, ServingShape
from domain.planning.layouts import InferenceLayouts, Sized, candidate_layouts
from domain.planning.plan import Plan
from domain.pricing.costs import Rental
from domain.workloads.requests import InferenceWorkload


class Copy:
    """One model copy's layout on one GPU: its memory, its batch cap, and its speed model."""

    # A copy depends on the request only through its shape (precisions, lengths, engine, batch cap), so requests of one
    # shape share it, with the points its speed model already computed.

    def __init__(self, sizing: InferenceSizing, gpu: Gpu, sized: Sized, usable: float, max_batch: int | None) -> None:
        self.gpu, self.layout = gpu, sized.layout
        self.memory: InferenceMemory = sizing.layouts_for(gpu).memory(sized, usable)
        workload = sizing.workload
        engine = ENGINES[workload.engine]
        # A request's own cap replaces the engine's default, above it too (throughput runs hold thousands of
        # sequences per copy): the launch command sets the engine's flag to it. Memory still bounds both.
        cap = max_batch if max_batch is not None else engine.batch_cap(gpu)
        self.capacity = min(self.memory.max_concurrency, cap)
        self.gpus = self.layout.gpus
        self.speed = InstanceSpeed(
            sizing.model,
            gpu,
            sizing.precision,
            sizing.kv_precision,
            self.layout,
            workload.input_tokens,
            workload.output_tokens,
            engine_speedup=engine.decode_speedup,
            two_stage_all_reduce=engine.two_stage_all_reduce,
            engine=workload.engine,
        )

    @classmethod
    def of(cls, plan: Plan, gpu: Gpu, sized: Sized, usable: float) -> Copy:
        """The copy for this request's shape, shared with earlier requests of the same shape on this catalog."""
        sizing = inference_sizing(plan)
        model = plan.model_key
        if model is None:
            return cls(sizing, gpu, sized, usable, plan.max_batch)
        key = plan.fact_key(CopyFact, model=model, shape=sizing.shape, gpu=gpu.id, layout=sized.layout)
        return SHARED.get(key, lambda: cls(sizing, gpu, sized, usable, plan.max_batch))

    def point(self, batch: int) -> ServingPoint:
        """The expected point at this batch."""
        return self.speed.point(batch, "expected")


@dataclass
class Choice:
    """A layout with its copies and batch, what it misses, and how it compares with the others."""

    copy: Copy
    copies: int
    batch: int
    in_flight: int
    busy_copies: int
    unmet: list[str]
    rental: Rental | None
    gpus: int
    throughput: float  # output tokens/s of the whole configuration, expected

    def key(self, with_load: bool, fixed: bool) -> tuple[float, ...]:
        """Lower is better: targets first, the closest to a missed latency target, then the cost of meeting the load,
        or throughput (per dollar)."""
        missed = float(len(self.unmet))
        gap = self.latency_ms() or 0.0
        hourly = self.hourly()
        if with_load and not fixed:
            return (missed, gap, hourly, -self.throughput)
        if fixed:
            return (missed, gap, -self.throughput, self.copy.gpus)
        return (missed, gap, -self.throughput / hourly, hourly)

    def hourly(self) -> float:
        """What the whole configuration costs per hour; its GPU count where nobody rents the GPU."""
        return self.rental.usd_per_hour if self.rental is not None else float(self.gpus)

    def cost_per_token(self, priced: bool) -> float:
        """Dollars per output token where `priced`, else GPU-hours (a price is not comparable with a GPU count)."""
        return (self.hourly() if priced else self.gpus) / (self.throughput * 3600)

    def missed_latency(self) -> str | None:
        """The latency target this choice misses (time per token first), or None."""
        return next((target for target in LATENCY_TARGETS if target in self.unmet), None)

    def latency_ms(self) -> float | None:
        """The figure of the missed latency target at the batch this choice runs."""
        target = self.missed_latency()
        if target is None:
            return None
        point = self.copy.point(self.batch)
        return (point.tpot_s if target == "max_tpot_ms" else point.ttft_s) * 1e3

    def copy_usd_per_hour(self) -> float | None:
        """What one copy of this layout costs per hour at its offer's price."""
        if self.rental is None:
            return None
        return self.rental.offer.usd_per_gpu_hour * self.copy.gpus


class InferenceSizing:
    """An inference request's model, precisions and layouts: computed once per request."""

    def __init__(self, plan: Plan) -> None:
        workload, model = plan.resolved.workload, plan.resolved.model
        assert isinstance(workload, InferenceWorkload) and isinstance(model, LlmModel)
        assert workload.precision is not None and workload.kv_cache_precision is not None
        self.model, self.workload = model, workload
        self.precision, self.kv_precision = workload.precision, workload.kv_cache_precision
        limits = plan.constraints
        max_nodes = 1 if limits.single_node else limits.max_nodes
        fixed = plan.fixed_count
        max_gpus = fixed if fixed is not None else min(limits.max_gpus, max_nodes * GPUS_PER_NODE)
        self.forced, self.fixed, self._plan = plan.forced, fixed, plan
        self.max_gpus = max_gpus
        # The layouts by NVLink domain size: a pure function of this sizing (fixed above) and the size.
        self._on_domain = Memo(self._layouts)
        self.layouts = self._on_domain(GPUS_PER_NODE)
        self.has_load = bool(workload.concurrency or workload.requests_per_second)
        self.shape = ServingShape(
            precision=self.precision,
            kv_precision=self.kv_precision,
            input_tokens=workload.input_tokens,
            output_tokens=workload.output_tokens,
            engine=workload.engine,
            max_batch=plan.max_batch,
        )
        # What the checks before a GPU's layout search depend on besides the GPU.
        self.check = InferenceCheck(
            precision=self.precision,
            kv_precision=self.kv_precision,
            tokens=workload.input_tokens + workload.output_tokens,
            engine=workload.engine,
            forced=plan.forced,
            fixed=fixed,
            max_gpus=max_gpus,
            offers=plan.offers_key,
            require_offer=limits.require_offer,
        )

    def layouts_for(self, gpu: Gpu) -> InferenceLayouts:
        """The layouts of one copy on this GPU's NVLink domain (most GPUs share the 8-GPU set)."""
        return self._on_domain(gpu.interconnect.domain_gpus)  # type: ignore[no-any-return]

    def _layouts(self, domain: int) -> InferenceLayouts:
        workload = self.workload
        tokens = workload.input_tokens + workload.output_tokens
        return self._plan.derived(
            LayoutsFact,
            lambda: self._build_layouts(domain, tokens),
            precision=self.precision,
            kv_precision=self.kv_precision,
            tokens=tokens,
            max_gpus=self.max_gpus,
            fixed=self.fixed,
            domain=domain,
            forced=self.forced,
        )

    def _build_layouts(self, domain: int, tokens: int) -> InferenceLayouts:
        model, forced = self.model, self.forced
        layouts = candidate_layouts(model, self.max_gpus, self.fixed, domain)
        if forced is not None:
            layouts = [
                layout
                for layout in layouts
                if (layout.tensor, layout.pipeline, layout.expert) == (forced.tensor, forced.pipeline, forced.expert)
            ] or [forced_layout(model, forced.tensor, forced.pipeline, forced.expert)]
        return InferenceLayouts(model, self.precision, self.kv_precision, tokens, layouts)


def forced_layout(model: LlmModel, tensor: int, pipeline: int, expert: int) -> Layout:
    """The layout a client forces; expert parallel without tensor parallel means data-parallel attention on MLA."""
    dp_attention = expert > 1 and tensor == 1 and model.mla is not None
    return Layout(tensor=tensor, pipeline=pipeline, expert=expert, dp_attention=dp_attention)


def inference_sizing(plan: Plan) -> InferenceSizing:
    """The plan's inference sizing (built once per plan)."""
    sizing = plan.sizing
    assert isinstance(sizing, InferenceSizing)
    return sizing


LATENCY_TARGETS = ("max_tpot_ms", "max_ttft_ms")
