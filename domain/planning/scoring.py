"""Costs and scores: what meeting the need costs first, performance beyond the need only as headroom."""

from __future__ import annotations

from collections.abc import Sequence

from domain.planning.plan import Candidate, Money, Plan
from domain.pricing.costs import HOURS_PER_MONTH, is_stale, per_1000_images, per_million_tokens, per_run
from domain.workloads.requests import Objective
from domain.workloads.results import Cost, ScoreBreakdown, rounded

WEIGHTS: dict[Objective, dict[str, float]] = {
    "balanced": {"performance": 0.20, "cost": 0.45, "fit": 0.10, "ecosystem": 0.15, "scalability": 0.10},
    "cost": {"performance": 0.05, "cost": 0.80, "fit": 0.05, "ecosystem": 0.05, "scalability": 0.05},
    "speed": {"performance": 0.55, "cost": 0.10, "fit": 0.10, "ecosystem": 0.15, "scalability": 0.10},
}
OBJECTIVES: dict[Objective, str] = {
    "balanced": "Cheapest way to meet the need first, then software maturity, memory headroom and scaling; speed "
    "beyond the need counts only as headroom.",
    "cost": "Cheapest way to meet the need first (hourly for a load or rate, per run for training, per token or image "
    "otherwise); the score, 80% of it cost, breaks ties.",
    "speed": "Fastest configuration (throughput, or shortest run) among those that meet the targets, cost second.",
}
# The seeds: CUDA is the most mature; ROCm costs ~10-20% and needs tuning (more in training); Gaudi needs manual
# integration; Ascend's stack is the least portable.
ECOSYSTEM_SCORE = {
    "inference": {"cuda": 1.0, "rocm": 0.85, "gaudi": 0.6, "cann": 0.5},
    "image_generation": {"cuda": 1.0, "rocm": 0.8, "gaudi": 0.6, "cann": 0.5},
    "training": {"cuda": 1.0, "rocm": 0.75, "gaudi": 0.55, "cann": 0.45},
}
SCALABILITY_SCORE = {
    "nvswitch": 1.0,
    "infinity_fabric": 0.95,
    "nvlink": 0.85,
    "ethernet": 0.8,
    "hccs": 0.7,
    "nvlink_bridge": 0.5,
    "pcie": 0.3,
}
THIN_HEADROOM_PCT = 5.0


def option_cost(plan: Plan, candidate: Candidate, money: Money) -> Cost | None:
    """The option's money figures; sets the candidate's unit cost."""
    rental = candidate.rental
    if rental is None:
        return None
    hourly = rental.usd_per_hour
    performance = candidate.performance
    unit: dict[str, float] = {}
    if plan.kind == "inference" and performance.tokens_per_second:
        candidate.unit_cost_usd = per_million_tokens(hourly, performance.tokens_per_second.expected)
        unit["per_million_tokens"] = candidate.unit_cost_usd
    elif plan.kind in ("training", "fine_tuning") and performance.run_hours:
        candidate.unit_cost_usd = per_run(hourly, performance.run_hours.expected)
        unit["per_run"] = candidate.unit_cost_usd
    elif performance.images_per_hour:
        candidate.unit_cost_usd = per_1000_images(hourly, performance.images_per_hour.expected)
        unit["per_1000_images"] = candidate.unit_cost_usd
    scale = money.factor
    return Cost(
        currency=money.currency,
        hourly=round(hourly * scale, 2),
        monthly=round(hourly * HOURS_PER_MONTH * scale, 2),
        **{name: rounded(value * scale) for name, value in unit.items()},
        stale_price=is_stale(rental.offer, plan.today, plan.price_max_age_days),
        price_age_days=rental.age_days(plan.today),
    )


def need_cost(plan: Plan, candidate: Candidate) -> float | None:
    """What meeting the request costs: the hourly rent when a load or rate is asked (the option already has the
    GPUs for it), the run's cost for training, else the unit cost (per token or image at full capacity)."""
    if candidate.rental is None:
        return None
    if plan.kind in ("inference", "image_generation") and candidate.need_value is not None:
        return candidate.rental.usd_per_hour
    return candidate.unit_cost_usd


def scores(plan: Plan, candidates: Sequence[Candidate], objective: Objective) -> list[ScoreBreakdown]:
    """Each candidate's parts of the score, 0..1, relative to the others."""
    best_perf = max((c.perf_value for c in candidates), default=0.0) or 1.0
    costs = [need_cost(plan, c) for c in candidates]
    known = [c for c in costs if c]
    cheapest = min(known) if known else None
    ecosystem = ECOSYSTEM_SCORE["training" if plan.kind == "fine_tuning" else plan.kind]
    breakdowns = []
    for candidate, cost in zip(candidates, costs, strict=True):
        performance = candidate.perf_value / best_perf
        need = candidate.need_value
        if objective != "speed" and need:
            # Meeting the need is what counts; beyond it, a little credit for headroom.
            performance = 0.85 * min(1.0, candidate.perf_value / need) + 0.15 * performance
        headroom = candidate.memory.headroom_pct
        breakdowns.append(
            ScoreBreakdown(
                performance=round(performance, 4),
                cost=round(cheapest / cost, 4) if cheapest and cost else 0.0,
                fit=0.0 if headroom < THIN_HEADROOM_PCT else round(min(1.0, headroom / 40.0), 4),
                ecosystem=ecosystem[candidate.gpu.ecosystem],
                # A single GPU needs no link; more GPUs score their interconnect.
                scalability=SCALABILITY_SCORE[candidate.gpu.interconnect.kind] if candidate.gpu_count > 1 else 1.0,
            )
        )
    return breakdowns


def total(breakdown: ScoreBreakdown, objective: Objective) -> float:
    """The weighted score of an objective."""
    weights = WEIGHTS[objective]
    return round(sum(weights[name] * getattr(breakdown, name) for name in weights), 4)
