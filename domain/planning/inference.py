"""Serving an LLM: the layout, copies and batch that meet the load at the lowest cost, or the fastest on given GPUs."""

from __future__ import annotations

import math
from dataclasses import dataclass

from domain.catalog import Gpu, LlmModel
from domain.efficiency import SCENARIOS
from domain.engines import ENGINES
from domain.estimates import MemoryUse, Parallelism, PerformanceEstimate, Range
from domain.explain import target_names
from domain.memory import GB, InferenceMemory, compared_bytes, runtime_reserve_bytes, usable_memory_bytes, weights_bytes
from domain.planning.inference_text import describe_inference, layout_label
from domain.planning.layouts import InferenceLayouts, Sized, candidate_layouts, largest_batch, smallest_batch
from domain.planning.plan import GPUS_PER_NODE, Candidate, Excluded, Plan, as_range, headroom_pct, rounded
from domain.planning.rentals import (
    broken_limit,
    machine_detail,
    node_count,
    precision_check,
    rental_for,
    require_host,
    require_renter,
)
from domain.pricing import Rental, can_host
from domain.serving import InstanceSpeed, Layout, ServingPoint
from domain.workloads import InferenceWorkload

# Layouts whose throughputs differ by less than the narrowest band any estimate gets are a tie.
THROUGHPUT_TIE = 0.10


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
        workload = sizing.workload
        key = (
            "copy",
            gpu.id,
            sized.layout,
            sizing.precision,
            sizing.kv_precision,
            workload.input_tokens,
            workload.output_tokens,
            workload.engine,
            plan.max_batch,
        )
        return plan.derived(key, lambda: cls(sizing, gpu, sized, usable, plan.max_batch))

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
        hourly = self.rental.usd_per_hour if self.rental is not None else float(self.gpus)
        if with_load and not fixed:
            return (missed, gap, hourly, -self.throughput)
        if fixed:
            return (missed, gap, -self.throughput, self.copy.gpus)
        return (missed, gap, -self.throughput / hourly, hourly)

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


LATENCY_TARGETS = ("max_tpot_ms", "max_ttft_ms")


@dataclass(frozen=True)
class Reach:
    """The best figure one GPU's configurations reach on a latency target they all miss."""

    target: str
    limit: float
    value: float
    gpu: Gpu
    gpus: int
    usd_per_hour: float | None


def _record_reach(plan: Plan, reach: Reach) -> None:
    """Keep, per missed latency target, the best figure any GPU reaches (for the answer's verdict)."""
    found: dict[str, Reach] = plan.memo.setdefault("reach", {})
    if reach.target not in found or reach.value < found[reach.target].value:
        found[reach.target] = reach


def _latency_miss(plan: Plan, copy: Copy, target: str, value: float, usd_per_hour: float | None) -> Excluded:
    """Record how close this layout comes to a latency target it misses; the exclusion that says so."""
    workload = inference_sizing(plan).workload
    limit = workload_limit(workload, target)
    _record_reach(plan, Reach(target, limit, value, copy.gpu, copy.gpus, usd_per_hour))
    return Excluded(
        "misses_latency",
        what=target_names([target], plan.lang),
        limit=limit,
        value=value,
        layout=layout_label(copy.layout, 1, plan.lang),
        gpus=copy.gpus,
    )


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
        self.layouts = self._layouts(GPUS_PER_NODE)
        self._by_domain = {GPUS_PER_NODE: self.layouts}
        self.has_load = bool(workload.concurrency or workload.requests_per_second)
        # What the checks before a GPU's layout search depend on besides the GPU.
        self.check_key = (
            "inference_check",
            self.precision,
            self.kv_precision,
            workload.input_tokens + workload.output_tokens,
            workload.engine,
            plan.forced,
            fixed,
            max_gpus,
            plan.offers_key,
            limits.require_offer,
        )

    def layouts_for(self, gpu: Gpu) -> InferenceLayouts:
        """The layouts of one copy on this GPU's NVLink domain (most GPUs share the 8-GPU set)."""
        domain = gpu.interconnect.domain_gpus
        found = self._by_domain.get(domain)
        if found is None:
            found = self._by_domain[domain] = self._layouts(domain)
        return found

    def _layouts(self, domain: int) -> InferenceLayouts:
        workload = self.workload
        tokens = workload.input_tokens + workload.output_tokens
        key = ("layouts", self.precision, self.kv_precision, tokens, self.max_gpus, self.fixed, domain, self.forced)
        return self._plan.derived(key, lambda: self._build_layouts(domain, tokens))

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
    sizing = plan.memo.get("inference")
    if sizing is None:
        sizing = plan.memo["inference"] = InferenceSizing(plan)
    return sizing


def _check_forced(plan: Plan, sizing: InferenceSizing) -> None:
    forced = plan.forced
    if forced is None:
        return
    model, gpus = sizing.model, forced.tensor * forced.pipeline if forced.expert == 1 or forced.tensor > 1 else 0
    gpus = gpus or forced.expert * forced.pipeline
    if model.attention_heads % forced.tensor:
        raise Excluded("layout_heads", tp=forced.tensor, heads=model.attention_heads)
    if forced.expert > 1 and (model.moe is None or forced.expert > model.moe.routed_experts):
        raise Excluded("layout_experts", ep=forced.expert)
    if plan.fixed_count is not None and plan.fixed_count % gpus:
        raise Excluded("layout_count", layout_gpus=gpus, gpus=plan.fixed_count)


def _evaluate(plan: Plan, copy: Copy, sizing: InferenceSizing) -> Choice:
    """Copies and batch of one layout: enough copies for the load within the targets, or all the GPUs given."""
    workload = sizing.workload
    capacity = copy.capacity
    tpot_target, ttft_target = workload.max_tpot_ms, workload.max_ttft_ms

    def within(batch: int) -> bool:
        point = copy.point(batch)
        return (tpot_target is None or point.tpot_s * 1e3 <= tpot_target) and (
            ttft_target is None or point.ttft_s * 1e3 <= ttft_target
        )

    unmet: list[str] = []
    best = capacity if tpot_target is None and ttft_target is None else largest_batch(capacity, within)
    if best == 0:
        best = 1
        point = copy.point(1)
        if tpot_target is not None and point.tpot_s * 1e3 > tpot_target:
            unmet.append("max_tpot_ms")
        if ttft_target is not None and point.ttft_s * 1e3 > ttft_target:
            unmet.append("max_ttft_ms")
    concurrency, rate = workload.concurrency, workload.requests_per_second
    fixed = plan.fixed_count
    if fixed is not None:
        copies = fixed // copy.gpus
    else:
        copies = 1
        if concurrency:
            copies = math.ceil(concurrency / best)
        if rate:
            copies = max(copies, math.ceil(rate / copy.point(best).requests_per_s))
    gpus = fixed if fixed is not None else copies * copy.gpus
    try:
        rental = rental_for(plan, copy.gpu, gpus, min(copy.gpus, GPUS_PER_NODE))
    except Excluded as error:
        missed = next((target for target in LATENCY_TARGETS if target in unmet), None)
        if missed is None or error.code not in ("needs_more_gpus", "needs_more_nodes"):
            raise
        point = copy.point(1)
        value = (point.tpot_s if missed == "max_tpot_ms" else point.ttft_s) * 1e3
        price = min((offer.usd_per_gpu_hour for offer in plan.offers(copy.gpu)), default=None)
        raise _latency_miss(plan, copy, missed, value, None if price is None else price * copy.gpus) from None
    if rental is not None and fixed is None:
        gpus = rental.gpus
        copies = gpus // copy.gpus  # whole instances: the extra GPUs run extra copies
    batch, busy = best, copies
    if concurrency:
        # Sequences spread over the copies; with fewer sequences than copies the rest stand idle.
        busy = min(copies, concurrency)
        batch = min(capacity, math.ceil(concurrency / copies))
    if rate:
        needed = rate / copies
        batch = max(
            batch if concurrency else 1, smallest_batch(best, lambda b: copy.point(b).requests_per_s >= needed) or best
        )
    in_flight = min(concurrency, copies * capacity) if concurrency else busy * batch
    throughput = (
        in_flight * copy.point(batch).tokens_per_s / batch if concurrency else busy * copy.point(batch).tokens_per_s
    )
    if concurrency and copies * capacity < concurrency:
        unmet.append("concurrency")
    if rate and copies * copy.point(min(best, capacity)).requests_per_s < rate * 0.999:
        unmet.append("requests_per_second")
    point = copy.point(batch)
    if tpot_target is not None and point.tpot_s * 1e3 > tpot_target and "max_tpot_ms" not in unmet:
        unmet.append("max_tpot_ms")
    if ttft_target is not None and point.ttft_s * 1e3 > ttft_target and "max_ttft_ms" not in unmet:
        unmet.append("max_ttft_ms")
    return Choice(copy, copies, batch, in_flight, busy, unmet, rental, gpus, throughput)


def _fitting(plan: Plan, sizing: InferenceSizing, gpu: Gpu, usable: float) -> list[Sized]:
    """The layouts that fit, once the GPU is known to run the precision and engine and to be rented."""
    workload, model = sizing.workload, sizing.model
    precision_check(gpu, sizing.precision)
    if gpu.vendor not in ENGINES[workload.engine].vendors:
        raise Excluded("engine_vendor", engine=ENGINES[workload.engine].name)
    _check_forced(plan, sizing)
    fitting = sizing.layouts_for(gpu).fitting(usable)
    if not fitting:
        needed = weights_bytes(model, sizing.precision) + runtime_reserve_bytes(model)
        usable_gb = compared_bytes("inference", gpu) * sizing.max_gpus / GB
        raise Excluded("does_not_fit", gpus=sizing.max_gpus, needed_gb=needed / GB, usable_gb=usable_gb)
    require_renter(plan, gpu)
    require_host(plan, gpu, {min(s.layout.gpus, GPUS_PER_NODE) for s in fitting})
    return fitting


def plan_inference(plan: Plan, gpu: Gpu) -> Candidate:
    """The best configuration of this GPU for the request (see module docstring)."""
    sizing = inference_sizing(plan)
    usable = usable_memory_bytes(gpu)
    fitting = plan.checked(sizing.check_key, gpu, lambda: _fitting(plan, sizing, gpu, usable))
    choices: list[Choice] = []
    first_error: Excluded | None = None
    closest: Excluded | None = None  # the layout that comes closest to a latency target all of them miss
    fixed = plan.fixed_count is not None
    # Serving a load, a layout can cost no less than one copy at the lowest price: once a layout that meets every
    # target costs less than that, larger ones need not be tried (layouts come fewest GPUs first).
    prune = sizing.has_load and not fixed
    lowest_price = min((offer.usd_per_gpu_hour for offer in plan.offers(gpu)), default=0.0)
    cheapest_met = math.inf
    hosts: dict[int, bool] = {}
    for sized in fitting:
        if prune and sized.layout.gpus * lowest_price >= cheapest_met and len(choices) >= 2:
            break
        per_machine = min(sized.layout.gpus, GPUS_PER_NODE)
        if plan.constraints.require_offer:
            hosted = hosts.get(per_machine)
            if hosted is None:
                hosted = hosts[per_machine] = any(can_host(offer, per_machine) for offer in plan.offers(gpu))
            if not hosted:
                # Renting this layout would fail with the `no_offer` that rental_for raises: skip it unbuilt.
                first_error = first_error or Excluded("no_offer", detail=machine_detail(plan, per_machine))
                continue
        try:
            choice = _evaluate(plan, Copy.of(plan, gpu, sized, usable), sizing)
        except Excluded as error:
            if error.code == "misses_latency" and (
                closest is None or float(error.figures["value"]) < float(closest.figures["value"])  # type: ignore[arg-type]
            ):
                closest = error
            first_error = first_error or error
            continue
        choices.append(choice)
        if not choice.unmet and choice.rental is not None:
            cheapest_met = min(cheapest_met, choice.rental.usd_per_hour)
    if not choices:
        assert first_error is not None
        raise closest or first_error
    choices.sort(key=lambda c: c.key(sizing.has_load, fixed))
    if fixed and not sizing.has_load:
        _prefer_faster_among_equals(choices)
    chosen = choices[0]
    runner_up = choices[1] if len(choices) > 1 else None
    nodes = node_count(chosen.rental, chosen.gpus)
    target, value = chosen.missed_latency(), chosen.latency_ms()
    miss = (
        None
        if target is None or value is None
        else _latency_miss(plan, chosen.copy, target, value, chosen.copy_usd_per_hour())
    )
    broken = broken_limit(plan, chosen.gpus, nodes)
    if broken is not None:
        # A copy that misses the latency target at one sequence serves one at a time: the count is the consequence.
        raise miss or broken
    return _candidate(plan, gpu, sizing, chosen, runner_up, nodes)


def workload_limit(workload: InferenceWorkload, target: str) -> float:
    """The request's limit on a latency target."""
    limit = workload.max_tpot_ms if target == "max_tpot_ms" else workload.max_ttft_ms
    assert limit is not None
    return limit


def _prefer_faster_among_equals(choices: list[Choice]) -> None:
    """Put first the fastest layout at batch 1 of those the ledger cannot tell from the best one by throughput."""
    # Cannot tell: throughput within the ledger's narrowest band of the best one's. The time per token at batch 1 is how
    # fast a request is served when it is not queued behind others: one TP8 copy rather than two TP4 copies of the same
    # throughput, as AMD runs Llama 3.1 405B on 8x MI300X.
    best = choices[0]
    equals = [
        c for c in choices if len(c.unmet) == len(best.unmet) and c.throughput * (1 + THROUGHPUT_TIE) >= best.throughput
    ]
    fastest = min(equals, key=lambda c: c.copy.point(1).tpot_s)
    if fastest is not best:
        choices.remove(fastest)
        choices.insert(0, fastest)


def _candidate(
    plan: Plan, gpu: Gpu, sizing: InferenceSizing, chosen: Choice, runner_up: Choice | None, nodes: int
) -> Candidate:
    copy, batch = chosen.copy, chosen.batch
    points = {s: copy.speed.point(batch, s) for s in SCENARIOS}
    share = chosen.throughput / points["expected"].tokens_per_s  # copies' worth of work actually in flight
    gpus = chosen.gpus
    layout = copy.layout
    performance = PerformanceEstimate(
        tokens_per_second=as_range({s: p.tokens_per_s * share for s, p in points.items()}),
        tokens_per_second_per_gpu=as_range({s: p.tokens_per_s * share / gpus for s, p in points.items()}),
        ttft_ms=as_range({s: p.ttft_s * 1e3 for s, p in points.items()}),
        tpot_ms=as_range({s: p.tpot_s * 1e3 for s, p in points.items()}),
        concurrency=Range(expected=chosen.in_flight, low=chosen.in_flight, high=chosen.in_flight),
        bound=points["expected"].bound,
    )
    mem = copy.memory
    per_copy_kv = batch * mem.kv_bytes_per_sequence * (copy.gpus if not layout.dp_attention else 1)
    kv_total = per_copy_kv * chosen.busy_copies
    weights_total = mem.weights_bytes * copy.gpus * chosen.copies
    capacity_total = mem.usable_bytes * gpus
    required = weights_total + kv_total + mem.reserve_bytes * gpus
    memory = MemoryUse(
        capacity_gb=rounded(capacity_total / GB),
        required_gb=rounded(required / GB),
        weights_gb=rounded(weights_total / GB),
        kv_cache_gb=rounded(kv_total / GB),
        headroom_pct=headroom_pct(capacity_total, required),
        max_concurrency=chosen.copies * copy.capacity,
    )
    workload = sizing.workload
    candidate = Candidate(
        gpu=gpu,
        gpu_count=gpus,
        nodes=nodes,
        parallelism=Parallelism(
            tensor=layout.tensor,
            pipeline=layout.pipeline,
            data=chosen.copies,
            expert=layout.expert,
            attention_data=layout.expert if layout.dp_attention else None,
        ),
        rental=chosen.rental,
        memory=memory,
        performance=performance,
        unmet=chosen.unmet,
        perf_value=chosen.throughput,
        need_value=_needed_throughput(workload, points["expected"]),
    )
    describe_inference(plan, candidate, sizing, chosen, runner_up)
    return candidate


def _needed_throughput(workload: InferenceWorkload, point: ServingPoint) -> float | None:
    """Output tokens/s the load asks for: its sequences at the per-sequence rate, or its requests' tokens."""
    needs = []
    if workload.concurrency:
        needs.append(workload.concurrency * point.tokens_per_s / point.batch)
    if workload.requests_per_second:
        needs.append(workload.requests_per_second * workload.output_tokens)
    return max(needs) if needs else None


def smallest_copy(plan: Plan, gpu: Gpu) -> int | None:
    """The fewest GPUs one copy of the model fits on (None when no layout fits)."""
    fitting = inference_sizing(plan).layouts_for(gpu).fitting(usable_memory_bytes(gpu))
    return fitting[0].layout.gpus if fitting else None
