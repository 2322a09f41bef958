"""Renting a configuration in whole instances within the request's limits, and the exclusions that follow."""

from __future__ import annotations

import math

from domain.catalog import Gpu
from domain.hardware.nodes import GPUS_PER_NODE
from domain.hardware.peaks import compute_tflops
from domain.narrative.explain import pricing_name
from domain.planning.facts import RentBounds, RentFact, UnrentedFact
from domain.planning.plan import Excluded, Plan
from domain.pricing.costs import Rental, can_host, rent


def rental_for(plan: Plan, gpu: Gpu, gpus: int, per_machine: int) -> Rental | None:
    """The cheapest whole-instance rental of at least `gpus` GPUs (exactly, for a fixed count) within the limits."""
    rental = _rent(plan, gpu, gpus, per_machine, limited=True)
    if rental is None:
        unlimited = _rent(plan, gpu, gpus, per_machine, limited=False)
        if unlimited is not None:
            check_limits(plan, unlimited.gpus, unlimited.machines)  # raises the limit it breaks
        if plan.constraints.require_offer:
            raise Excluded("no_offer", detail=unrented_detail(plan, gpu) or machine_detail(plan, per_machine))
    return rental


def _rent(plan: Plan, gpu: Gpu, gpus: int, per_machine: int, *, limited: bool) -> Rental | None:
    """The cheapest rental (within the request's limits if `limited`), shared by requests of equal offers and limits."""
    # Shared because every layout of every request asks for one.
    exact = plan.fixed_count is not None

    def within_limits(gpus: int, machines: int) -> bool:
        return broken_limit(plan, gpus, machines) is None

    def build() -> Rental | None:
        if limited:
            return rent(plan.offers(gpu), gpus, per_machine, exact=exact, fits=within_limits)
        return rent(plan.offers(gpu), gpus, per_machine, exact=exact)

    if plan.offers_key is None:
        return build()
    limits = plan.constraints
    bounds = RentBounds(max_gpus=limits.max_gpus, max_nodes=limits.max_nodes, single_node=limits.single_node)
    return plan.shared(
        RentFact,
        build,
        gpu=gpu.id,
        gpus=gpus,
        per_machine=per_machine,
        exact=exact,
        bounds=bounds if limited else None,
        offers=plan.offers_key,
    )


def require_renter(plan: Plan, gpu: Gpu) -> None:
    """Exclude a GPU nobody rents under the constraints once it is known to fit, before its layout is searched."""
    # Whatever layout the search found, renting it would fail with this same `no_offer`.
    if plan.constraints.require_offer and not plan.offers(gpu):
        detail = unrented_detail(plan, gpu)
        assert detail is not None
        raise Excluded("no_offer", detail=detail)


def require_host(plan: Plan, gpu: Gpu, per_machine: set[int]) -> None:
    """Exclude a GPU before its layout search when no allowed offer hosts the one GPUs-per-machine all layouts need."""
    # Only when every layout it may choose needs the same GPUs per machine: renting would then fail with this same
    # `no_offer` whatever the search found.
    if plan.constraints.require_offer and len(per_machine) == 1:
        (size,) = per_machine
        if not any(can_host(offer, size) for offer in plan.offers(gpu)):
            raise Excluded("no_offer", detail=machine_detail(plan, size))


def unrented_detail(plan: Plan, gpu: Gpu) -> str | None:
    """Why no offer of the GPU is allowed; None when some are (the instance size is then what fails)."""
    if plan.offers_key is None:
        return _unrented_detail(plan, gpu)
    return plan.shared(
        UnrentedFact, lambda: _unrented_detail(plan, gpu), gpu=gpu.id, offers=plan.offers_key, lang=plan.lang
    )


def _unrented_detail(plan: Plan, gpu: Gpu) -> str | None:
    offers = plan.catalog.offers_for_gpu(gpu.id)
    if not offers:
        return "（目录中没有人出租）" if plan.lang == "zh" else " (nobody in the catalog rents it)"
    if plan.offers(gpu):
        return None
    models = ", ".join(pricing_name(pricing, plan.lang) for pricing in sorted({o.pricing for o in offers}))
    if plan.lang == "zh":
        return f"（现有报价的计价方式：{models}）"
    return f" (offers exist as {models})"


def machine_detail(plan: Plan, per_machine: int) -> str:
    if plan.lang == "zh":
        return f"（需要单机 {per_machine} 卡的实例）"
    return f" (needs instances with {per_machine} GPUs in one machine)"


def check_limits(plan: Plan, gpus: int, nodes: int) -> None:
    broken = broken_limit(plan, gpus, nodes)
    if broken is not None:
        raise broken


def broken_limit(plan: Plan, gpus: int, nodes: int) -> Excluded | None:
    """The exclusion for the first GPU or node limit a configuration breaks; None within all of them."""
    limits = plan.constraints
    if plan.fixed_count is None and gpus > limits.max_gpus:
        return Excluded("needs_more_gpus", gpus=gpus, limit=limits.max_gpus)
    if limits.single_node and nodes > 1:
        return Excluded("needs_more_nodes", nodes=nodes, limit=1)
    if nodes > limits.max_nodes:
        return Excluded("needs_more_nodes", nodes=nodes, limit=limits.max_nodes)
    return None


def node_count(rental: Rental | None, gpus: int) -> int:
    return rental.machines if rental is not None else math.ceil(gpus / GPUS_PER_NODE)


def precision_check(gpu: Gpu, precision: str) -> None:
    if precision == "fp8" and not gpu.supports_fp8:
        raise Excluded("no_fp8", precision="FP8")
    if compute_tflops(gpu, precision) is None:
        raise Excluded("no_precision", precision=precision.upper())


# ---------------------------------------------------------------- inference
