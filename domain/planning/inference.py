"""Serving an LLM: the layout, copies and batch that meet the load at the lowest cost, or the fastest on given GPUs."""

from __future__ import annotations

import math
from dataclasses import dataclass

from domain.catalog import Gpu
from domain.hardware.efficiency import SCENARIOS
from domain.hardware.nodes import GPUS_PER_NODE
from domain.narrative.explain import target_names
from domain.performance.engines import ENGINES
from domain.performance.layout import ServingPoint
from domain.performance.memory import GB, runtime_reserve_bytes, usable_memory_bytes, weights_bytes
from domain.performance.training_memory import compared_bytes
from domain.planning.inference_sizing import (
    LATENCY_TARGETS,
    Choice,
    Copy,
    InferenceSizing,
    inference_sizing,
)
from domain.planning.inference_text import describe_inference, layout_label
from domain.planning.layouts import Sized, largest_batch, smallest_batch
from domain.planning.plan import Candidate, Excluded, Plan, as_range, headroom_pct
from domain.planning.rentals import (
    broken_limit,
    machine_detail,
    node_count,
    precision_check,
    rental_for,
    require_host,
    require_renter,
)
from domain.pricing.costs import can_host
from domain.workloads.requests import InferenceWorkload
from domain.workloads.results import MemoryUse, Parallelism, PerformanceEstimate, Range, rounded

# Layouts whose throughputs differ by less than the narrowest band any estimate gets are a tie.
THROUGHPUT_TIE = 0.10
# Costs per token closer than this are the same to the cent the answer states per million tokens on a dollar's scale;
# between such layouts the simpler one (fewer GPUs per copy, fewer stages) is what an operator runs.
COST_TIE = 0.01


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
    fitting = plan.checked(sizing.check, gpu, lambda: _fitting(plan, sizing, gpu, usable))
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
        _prefer_cheaper_among_equals(choices)
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


def _prefer_cheaper_among_equals(choices: list[Choice]) -> None:
    """Put first the cheapest per token of the layouts the ledger cannot tell from the best one by throughput."""
    # With no load the question is throughput. Layouts within the ledger's narrowest band of the best one's cannot be
    # told apart by it, so what decides is what a token costs (whole instances of different sizes are priced
    # differently), not the time per token of a lone request, which no load asks about.
    best = choices[0]
    equals = [
        c for c in choices if len(c.unmet) == len(best.unmet) and c.throughput * (1 + THROUGHPUT_TIE) >= best.throughput
    ]
    priced = all(c.rental is not None for c in equals)

    lowest = min(c.cost_per_token(priced) for c in equals)
    cheapest = min(
        (c for c in equals if c.cost_per_token(priced) <= lowest * (1 + COST_TIE)),
        key=lambda c: (c.copy.gpus, c.copy.layout.pipeline, c.cost_per_token(priced)),
    )
    if cheapest is not best:
        choices.remove(cheapest)
        choices.insert(0, cheapest)


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
    found: dict[str, Reach] = plan.reached
    if reach.target not in found or reach.value < found[reach.target].value:
        found[reach.target] = reach
