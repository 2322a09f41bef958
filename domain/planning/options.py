"""Options as the answer shows them: common reasons and warnings, rent-or-buy hint, requirements, infeasible ones."""

from __future__ import annotations

import dataclasses
import math

import msgspec

from domain.calibration.holdout import regime
from domain.calibration.ledger import confidence, widen
from domain.catalog import DiffusionModel, Gpu, LlmModel
from domain.hardware.efficiency import family_of
from domain.hardware.nodes import GPUS_PER_NODE
from domain.narrative.explain import pricing_name, target_names
from domain.performance.images import image_tflop
from domain.performance.memory import (
    BYTES_PER_PARAM,
    GB,
    diffusion_memory,
    kv_bytes_per_sequence,
    matmul_params,
    runtime_reserve_bytes,
    weights_bytes,
)
from domain.performance.training_flops import training_flops_per_token
from domain.performance.training_memory import compared_bytes, training_memory
from domain.planning.facts import NotesFact, OwnedMonthlyFact
from domain.planning.inference import smallest_copy
from domain.planning.inference_text import memory_assumption
from domain.planning.plan import Candidate, Excluded, Money, Plan, headroom_pct
from domain.planning.planners import PLANNERS
from domain.pricing.costs import HOURS_PER_MONTH, PRICE_AGE_WARNING_DAYS, Rental, user_price_assumption
from domain.pricing.tco import owned_monthly_usd
from domain.workloads.requests import FineTuningWorkload, ImageGenerationWorkload, InferenceWorkload
from domain.workloads.results import (
    Cost,
    GpuSummary,
    MemoryUse,
    OfferUsed,
    Option,
    Parallelism,
    PerformanceEstimate,
    Requirements,
    ScoreBreakdown,
    TcoHint,
    rounded,
)


def common_notes(plan: Plan, candidate: Candidate) -> tuple[list[str], list[str]]:
    """The reasons and warnings every option gets after its planner's: software stack, GPU data, the price used."""
    rental = candidate.rental
    if plan.offers_key is None:
        reasons, warnings = _common_notes(plan, candidate.gpu, rental)
    else:
        # The same GPU and offer give the same notes to every request of this catalog, language and day.
        reasons, warnings = plan.shared(
            NotesFact,
            lambda: _common_notes(plan, candidate.gpu, rental),
            gpu=candidate.gpu.id,
            offer=rental.offer.id if rental else None,
            kind=plan.kind,
            lang=plan.lang,
            today=plan.today,
            require_offer=plan.constraints.require_offer,
        )
    return list(reasons), list(warnings)


def _common_notes(plan: Plan, gpu: Gpu, rental: Rental | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    reasons: list[str] = []
    warnings: list[str] = []
    stack = gpu.ecosystem
    if stack in ("rocm", "gaudi", "cann"):
        warnings.append(plan.say(stack))
    if gpu.confidence == "low":
        warnings.append(plan.say("low_confidence_gpu", gpu=gpu.name))
    if confidence(plan.catalog.accuracy, gpu, plan.kind) == "spec_sheet":
        warnings.append(plan.say("spec_sheet", gpu=gpu.name))
    if rental is not None:
        offer = rental.offer
        days = rental.age_days(plan.today)
        if days > min(PRICE_AGE_WARNING_DAYS, plan.price_max_age_days):
            warnings.append(plan.say("price_age", days=days, as_of=offer.as_of.isoformat()))
        provider = plan.catalog.provider(offer.provider)
        reasons.append(
            plan.say(
                "offer",
                provider=provider.name if provider else offer.provider,
                pricing=pricing_name(offer.pricing, plan.lang),
                price=offer.usd_per_gpu_hour,
                as_of=offer.as_of.isoformat(),
            )
        )
    elif plan.constraints.require_offer is False:
        warnings.append(plan.say("no_offer_priced"))
    return tuple(reasons), tuple(warnings)


def tco_hint(plan: Plan, candidate: Candidate, money: Money) -> TcoHint | None:
    """Serving runs around the clock: set a month of rent against a month of owning the same GPUs."""
    if plan.kind != "inference" or candidate.rental is None:
        return None
    gpu, count = candidate.gpu, candidate.gpu_count
    owned = plan.shared(
        OwnedMonthlyFact,
        lambda: owned_monthly_usd(plan.catalog, gpu, count, plan.today, plan.lang),
        gpu=gpu.id,
        gpu_count=count,
        today=plan.today,
        lang=plan.lang,
    )
    if owned is None:
        return None
    monthly_owned, inputs, warnings = owned
    monthly_rent = candidate.rental.usd_per_hour * HOURS_PER_MONTH
    return TcoHint(
        currency=money.currency,
        monthly_rent=round(monthly_rent * money.factor, 2),
        monthly_owned=round(monthly_owned * money.factor, 2),
        cheaper="buy" if monthly_owned < monthly_rent else "rent",
        years=inputs.years,
        purchase_usd=round(inputs.purchase_usd, 2),
        basis=plan.say(
            "a_tco_basis",
            years=inputs.years,
            pue=inputs.pue,
            electricity=inputs.electricity_usd_per_kwh,
            resale=inputs.resale_fraction,
            capital=inputs.cost_of_capital,
            operations=inputs.operations_usd_per_year,
        ),
        warnings=list(warnings),
    )


def build_option(
    plan: Plan,
    candidate: Candidate,
    rank: int,
    breakdown: ScoreBreakdown,
    cost: Cost | None,
    score: float,
    money: Money,
) -> Option:
    rental = candidate.rental
    # Built here, not by the planners' callers: only the options returned need their text.
    reasons, warnings = common_notes(plan, candidate)
    if candidate.unmet:
        warnings.append(plan.say("misses", targets=target_names(candidate.unmet, plan.lang)))
    return Option(
        rank=rank,
        feasible=True,
        gpu=GpuSummary(id=candidate.gpu.id, name=candidate.gpu.name, vendor=candidate.gpu.vendor),
        gpu_count=candidate.gpu_count,
        nodes=candidate.nodes,
        parallelism=candidate.parallelism,
        offer=None
        if rental is None
        else OfferUsed(
            offer_id=rental.offer.id,
            provider=rental.offer.provider,
            pricing=rental.offer.pricing,
            usd_per_gpu_hour=rental.offer.usd_per_gpu_hour,
            gpus_per_instance=rental.offer.gpus_per_instance,
            instances=rental.instances,
            as_of=rental.offer.as_of,
            age_days=rental.age_days(plan.today),
            source=rental.offer.source,
            tier=rental.offer.tier,
        ),
        cost=cost,
        memory=candidate.memory,
        performance=_banded(plan, candidate),
        meets_targets=not candidate.unmet,
        unmet_targets=candidate.unmet,
        score=score,
        score_breakdown=breakdown,
        confidence=confidence(plan.catalog.accuracy, candidate.gpu, plan.kind),
        assumptions=candidate.assumptions + user_price_assumption(rental.offer if rental else None),
        reasons=candidate.reasons + reasons,
        warnings=candidate.warnings + warnings,
        tco=tco_hint(plan, candidate, money),
        layout_reason=candidate.layout_reason,
        launch=candidate.launch,
    )


# ---------------------------------------------------------------- requests


def requirements(plan: Plan) -> Requirements:
    workload, model = plan.resolved.workload, plan.resolved.model
    if isinstance(workload, InferenceWorkload):
        assert isinstance(model, LlmModel) and workload.precision and workload.kv_cache_precision
        weights = weights_bytes(model, workload.precision)
        kv = kv_bytes_per_sequence(model, workload.kv_cache_precision, workload.input_tokens + workload.output_tokens)
        return Requirements(
            weights_gb=rounded(weights / GB),
            kv_cache_gb_per_request=rounded(kv / GB),
            min_memory_gb=rounded((weights + kv + runtime_reserve_bytes(model)) / GB),
            flops_per_token=rounded(2.0 * matmul_params(model)),
        )
    if isinstance(workload, ImageGenerationWorkload):
        assert isinstance(model, DiffusionModel) and workload.steps and workload.width and workload.height
        memory = diffusion_memory(model, plan.catalog.gpus[0], workload.precision, workload.width, workload.height)
        flops = image_tflop(model, workload.width, workload.height, workload.steps) * 1e12
        return Requirements(
            weights_gb=rounded(memory.weights_bytes / GB),
            min_memory_gb=rounded(memory.required_bytes / GB),
            flops_per_image=rounded(flops),
        )
    assert isinstance(model, LlmModel)
    method = workload.method if isinstance(workload, FineTuningWorkload) else "full"
    per_token = training_flops_per_token(model, workload.sequence_length, method)
    one_gpu = training_memory(
        model,
        plan.catalog.gpus[0],  # required bytes do not depend on the GPU
        method=method,
        optimizer=workload.optimizer,
        sequence_length=workload.sequence_length,
        gpus=1,
        tensor_parallel=1,
        recompute_layers=model.layers,
        lora_rank=workload.lora_rank if isinstance(workload, FineTuningWorkload) else 16,
    )
    return Requirements(
        weights_gb=rounded(model.params_b * BYTES_PER_PARAM["nf4" if method == "qlora" else "bf16"]),
        min_memory_gb=rounded(one_gpu.required_bytes / GB),
        total_flops=rounded(per_token * workload.train_tokens),
        flops_per_token=rounded(per_token),
    )


def infeasible(plan: Plan, gpu: Gpu, gpu_count: int, reason: Excluded) -> Option:
    reasons = [plan.say(reason.code, **reason.figures)]
    smallest = msgspec.structs.replace(plan.constraints, gpu_count=None, max_gpus=512, require_offer=False)
    relaxed = dataclasses.replace(plan, constraints=smallest, forced=None, reached={})
    try:
        if plan.kind == "inference":
            fewest = smallest_copy(relaxed, gpu)
            if fewest is None:
                raise Excluded("does_not_fit")
        else:
            fewest = PLANNERS[plan.kind](relaxed, gpu).gpu_count
        reasons.append(plan.say("needs_at_least", gpus=fewest, gpu=gpu.name))
    except Excluded:
        fewest = None
    if plan.kind == "inference":
        reasons += _smaller_precisions(relaxed, gpu, fewest)
    # The memory the planner compared, so the capacity shown agrees with the verdict.
    capacity = compared_bytes(plan.kind, gpu) * gpu_count / GB
    needs = requirements(plan)
    needed = needs.min_memory_gb
    return Option(
        rank=1,
        feasible=False,
        gpu=GpuSummary(id=gpu.id, name=gpu.name, vendor=gpu.vendor),
        gpu_count=gpu_count,
        nodes=math.ceil(gpu_count / GPUS_PER_NODE),
        parallelism=Parallelism(tensor=1, pipeline=1, data=1),
        offer=None,
        cost=None,
        memory=MemoryUse(
            capacity_gb=rounded(capacity),
            required_gb=rounded(needed),
            weights_gb=needs.weights_gb,
            headroom_pct=headroom_pct(capacity, needed),
        ),
        performance=None,
        meets_targets=False,
        unmet_targets=[],
        score=0.0,
        score_breakdown=ScoreBreakdown(performance=0, cost=0, fit=0, ecosystem=0, scalability=0),
        confidence=confidence(plan.catalog.accuracy, gpu, plan.kind),
        assumptions=[memory_assumption(gpu, plan.lang)] if plan.kind == "inference" else [],
        reasons=reasons,
        warnings=[],
    )


def _banded(plan: Plan, candidate: Candidate) -> PerformanceEstimate:
    """The candidate's estimate with bands as wide as the ledger's errors for its GPU family, kind and regime."""
    ledger = plan.catalog.accuracy
    if ledger is None:
        return widen(candidate.performance, 0.0)
    in_flight = candidate.performance.concurrency
    per_copy = in_flight.expected / max(1, candidate.parallelism.data) if in_flight is not None else 1.0
    cell = regime(plan.kind, per_copy, candidate.gpu_count)
    return widen(candidate.performance, ledger.spread(family_of(candidate.gpu), plan.kind, cell))


# Weights a serving engine can load in fewer bytes, each with the GPU capability it needs.
SMALLER_PRECISIONS = (("fp8", "supports_fp8"), ("int4", None))


def _smaller_precisions(relaxed: Plan, gpu: Gpu, fewest: int | None) -> list[str]:
    """ "At FP8 it fits on N x GPU": each lower weight precision the GPU runs that needs fewer GPUs than now."""
    workload = relaxed.resolved.workload
    assert isinstance(workload, InferenceWorkload) and workload.precision is not None
    found = []
    for precision, capability in SMALLER_PRECISIONS:
        if BYTES_PER_PARAM[precision] >= BYTES_PER_PARAM[workload.precision]:
            continue
        if capability is not None and not getattr(gpu, capability):
            continue
        lower = msgspec.structs.replace(workload, precision=precision)
        resolved = dataclasses.replace(relaxed.resolved, workload=lower)
        gpus = smallest_copy(dataclasses.replace(relaxed, resolved=resolved, reached={}), gpu)
        if gpus is not None and (fewest is None or gpus < fewest):
            found.append(relaxed.say("fits_at_precision", precision=precision.upper(), gpus=gpus, gpu=gpu.name))
    return found
