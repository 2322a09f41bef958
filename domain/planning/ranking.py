"""Rank every GPU of the catalog for a request, or estimate one configuration."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import msgspec

from domain.catalog import Catalog, Gpu
from domain.narrative.explain import request_targets
from domain.narrative.summaries import OutOfReach, recommendation_summary
from domain.planning.facts import ExclusionFact, StaleOffersFact
from domain.planning.options import build_option, infeasible, requirements
from domain.planning.plan import Candidate, Excluded, Money, Plan
from domain.planning.planners import PLANNERS, SIZERS
from domain.planning.scoring import need_cost, option_cost, scores, total
from domain.pricing.costs import DEFAULT_PRICE_MAX_AGE_DAYS, stale_count
from domain.workloads.requests import DEFAULT_PRICING, Constraints, EstimateRequest, Lang, RecommendationRequest
from domain.workloads.resolve import Resolved, check_providers, normalise, resolve_prices, unknown_name
from domain.workloads.results import Cost, ExchangeRate, Exclusion, Option, Recommendation


def _resolve_names(catalog: Catalog, names: Sequence[str] | None, field_name: str) -> set[str] | None:
    if names is None:
        return None
    ids = set()
    for name in names:
        gpu = catalog.gpu(name)
        if gpu is None:
            raise unknown_name(catalog, "gpu", name, field_name)
        ids.add(gpu.id)
    return ids


def _filter_reason(
    plan: Plan, gpu: Gpu, allowed: frozenset[str] | None, excluded: frozenset[str] | None
) -> Exclusion | None:
    limits = plan.constraints
    code, figures = "", dict[str, str]()
    if allowed is not None and gpu.id not in allowed:
        code = "not_allowed"
    elif excluded is not None and gpu.id in excluded:
        code = "excluded_by_request"
    elif limits.vendors is not None and gpu.vendor not in limits.vendors:
        code, figures = "vendor_excluded", {"vendor": gpu.vendor}
    elif limits.ecosystems is not None and gpu.ecosystem not in limits.ecosystems:
        code, figures = "ecosystem_excluded", {"ecosystem": gpu.ecosystem}
    if not code:
        return None
    return Exclusion(gpu=gpu.id, code=code, reason=plan.say(code, **figures))


def recommendation_id(
    request: RecommendationRequest, catalog_version: str, rate: ExchangeRate | None, day: date
) -> str:
    """Content address: the same normalised request on the same catalog, rate and day gives the same id."""
    # The day is part of it because answers state how old each price is.
    converted = (rate.usd_to_cny, rate.as_of) if rate is not None else None
    digest = hashlib.sha256(msgspec.json.encode([request, catalog_version, converted, day]))
    return "rec_" + digest.hexdigest()[:24]


@dataclass(frozen=True)
class PreparedRequest:
    """A request with every default filled and every name checked: what the id is computed from."""

    request: RecommendationRequest
    resolved: Resolved
    constraints: Constraints
    allowed: frozenset[str] | None
    denied: frozenset[str] | None


def prepare(catalog: Catalog, request: RecommendationRequest, lang: Lang) -> PreparedRequest:
    """Normalise a request (equal meaning gives equal ids) and reject what no GPU could fix."""
    resolved = normalise(request.workload, catalog)
    given = request.constraints or Constraints()
    allowed = _resolve_names(catalog, given.gpus, "constraints.gpus")
    denied = _resolve_names(catalog, given.exclude_gpus, "constraints.exclude_gpus")
    check_providers(catalog, given.providers, "constraints.providers")

    def canonical(values: Iterable[str] | None) -> list[Any] | None:
        # Order, repetition and aliases do not change the question, so they must not change the id.
        return sorted(set(values)) if values is not None else None

    constraints = msgspec.structs.replace(
        given,
        gpus=canonical(allowed),
        exclude_gpus=canonical(denied),
        vendors=canonical(given.vendors),
        ecosystems=canonical(given.ecosystems),
        providers=canonical(given.providers),
        pricing=canonical(given.pricing or DEFAULT_PRICING),
        prices=resolve_prices(catalog, given.prices, "constraints.prices"),
    )
    normalised = msgspec.structs.replace(request, workload=resolved.workload, constraints=constraints, lang=lang)
    return PreparedRequest(
        request=normalised,
        resolved=resolved,
        constraints=constraints,
        allowed=frozenset(allowed) if allowed is not None else None,
        denied=frozenset(denied) if denied is not None else None,
    )


def recommend(
    catalog: Catalog, request: RecommendationRequest, *, now: datetime, lang: Lang, rate: ExchangeRate
) -> Recommendation:
    """Every GPU allowed by the constraints in its smallest suitable configuration, ranked, with exclusions."""
    return rank(catalog, prepare(catalog, request, lang), now=now, rate=rate)


def rank(
    catalog: Catalog,
    prepared: PreparedRequest,
    *,
    now: datetime,
    rate: ExchangeRate,
    price_max_age_days: int = DEFAULT_PRICE_MAX_AGE_DAYS,
) -> Recommendation:
    """The ranking of a prepared request."""
    normalised, constraints = prepared.request, prepared.constraints
    lang: Lang = normalised.lang or "en"
    allowed, denied = prepared.allowed, prepared.denied
    plan = Plan(
        catalog=catalog,
        resolved=prepared.resolved,
        constraints=constraints,
        lang=lang,
        today=now.date(),
        price_max_age_days=price_max_age_days,
        sizers=SIZERS,
    )
    money = Money(currency=normalised.currency, rate=rate)
    candidates: list[Candidate] = []
    costs: list[Cost | None] = []
    excluded: list[Exclusion] = []
    planner = PLANNERS[plan.kind]
    filtering = any(names is not None for names in (allowed, denied, constraints.vendors, constraints.ecosystems))
    for gpu in catalog.gpus:
        filtered = _filter_reason(plan, gpu, allowed, denied) if filtering else None
        if filtered is not None:
            excluded.append(filtered)
            continue
        # Most GPUs fail the same load-independent check request after request: skip planning them again.
        known = plan.known_exclusion(gpu)
        if known is not None:
            excluded.append(known)
            continue
        try:
            candidate = planner(plan, gpu)
        except Excluded as reason:
            excluded.append(_exclusion(plan, gpu, reason))
            continue
        cost = option_cost(plan, candidate, money)
        if (
            constraints.max_usd_per_hour is not None
            and candidate.rental is not None
            and candidate.rental.usd_per_hour > constraints.max_usd_per_hour
        ):
            excluded.append(
                Exclusion(
                    gpu=gpu.id,
                    code="over_budget",
                    reason=plan.say(
                        "over_budget", hourly=candidate.rental.usd_per_hour, limit=constraints.max_usd_per_hour
                    ),
                )
            )
            continue
        candidates.append(candidate)
        costs.append(cost)

    objective = normalised.objective
    breakdowns = scores(plan, candidates, objective)
    totals = [total(breakdown, objective) for breakdown in breakdowns]
    needs = [need_cost(plan, c) for c in candidates]

    def order_key(i: int) -> tuple[Any, ...]:
        # Options that meet the targets come first, then the objective's score; the cost of meeting the need
        # breaks ties.
        cost = needs[i] if needs[i] is not None else math.inf
        stale = costs[i] is not None and costs[i].stale_price  # type: ignore[union-attr]
        # An old price is information (a warning, a sentence in the summary), not a penalty: it only breaks a tie
        # between options the objective cannot tell apart. Under `cost` the objective is the cost of meeting the
        # need itself, so it orders the options and the score (software, headroom) breaks ties.
        if objective == "cost":
            return (bool(candidates[i].unmet), cost, bool(stale), -totals[i], candidates[i].gpu.id)
        return (bool(candidates[i].unmet), -totals[i], bool(stale), cost, candidates[i].gpu.id)

    order = sorted(range(len(candidates)), key=order_key)
    options = []
    for rank, index in enumerate(order, start=1):
        candidate = candidates[index]
        if rank > normalised.limit:
            excluded.append(
                Exclusion(
                    gpu=candidate.gpu.id,
                    code="below_limit",
                    reason=plan.say("below_limit", rank=rank, limit=normalised.limit),
                )
            )
            continue
        options.append(build_option(plan, candidate, rank, breakdowns[index], costs[index], totals[index], money))
    excluded.sort(key=lambda e: exclusion_order(catalog, e))
    rate_used = rate if normalised.currency == "CNY" else None
    return Recommendation(
        id=recommendation_id(normalised, catalog.version, rate_used, now.date()),
        created_at=now.isoformat(),
        catalog_version=catalog.version,
        workload=normalised.workload,
        constraints=constraints,
        objective=normalised.objective,
        currency=normalised.currency,
        exchange_rate=rate_used,
        lang=lang,
        requirements=msgspec.structs.replace(
            requirements(plan),
            stale_offers=_stale_offers(plan),
        ),
        options=options,
        excluded=excluded,
        summary=recommendation_summary(
            plan.kind,
            options,
            excluded,
            lang,
            plan.catalog,
            request_targets(normalised.workload, lang, note=False),
            _out_of_reach(plan, money) if not any(o.meets_targets for o in options) else None,
        ),
    )


# The exclusions closest to an option first: what a looser limit or a larger budget would admit, then GPUs that fit
# but nobody rents, then those the model does not fit or runs on, then the ones the request itself left out.
_EXCLUSION_ORDER = (
    "misses_latency",
    "needs_more_gpus",
    "needs_more_nodes",
    "over_budget",
    "below_limit",
    "no_offer",
    "does_not_fit",
    "no_fp8",
    "no_precision",
)


def exclusion_order(catalog: Catalog, exclusion: Exclusion) -> tuple[int, float, str]:
    """Sort key of an exclusion: its code's closeness to an option, then the larger GPU first."""
    rank = _EXCLUSION_ORDER.index(exclusion.code) if exclusion.code in _EXCLUSION_ORDER else len(_EXCLUSION_ORDER)
    gpu = catalog.gpu(exclusion.gpu)
    return (rank, -(gpu.memory_gb if gpu is not None else 0.0), exclusion.gpu)


def _out_of_reach(plan: Plan, money: Money) -> list[OutOfReach]:
    """The latency targets no configuration met, with the best figure one reached (from the inference planner)."""
    found: dict[str, Any] = plan.reached
    return [
        OutOfReach(
            target=r.target,
            limit=r.limit,
            value=r.value,
            gpu=r.gpu.name,
            gpus=r.gpus,
            hourly=None if r.usd_per_hour is None else r.usd_per_hour * money.factor,
            currency=money.currency,
        )
        for r in found.values()
    ]


def _exclusion(plan: Plan, gpu: Gpu, reason: Excluded) -> Exclusion:
    """A GPU's exclusion; most GPUs are excluded alike request after request, so their sentences are shared."""
    # Figures are numbers and strings (every Excluded raised in the planners), so they make a key.
    return plan.shared(
        ExclusionFact,
        lambda: Exclusion(gpu=gpu.id, code=reason.code, reason=plan.say(reason.code, **reason.figures)),
        gpu=gpu.id,
        lang=plan.lang,
        code=reason.code,
        figures=tuple(sorted(reason.figures.items())),
    )


def _stale_offers(plan: Plan) -> int:
    """How many of the offers the request may use are too old to rely on (the same for every request alike)."""

    def count() -> int:
        offers = (o for gpu in plan.catalog.gpus for o in plan.offers(gpu))
        return stale_count(offers, plan.today, plan.price_max_age_days)

    if plan.offers_key is None:
        return count()
    return plan.shared(
        StaleOffersFact, count, offers=plan.offers_key, today=plan.today, max_age_days=plan.price_max_age_days
    )


def estimate(
    catalog: Catalog,
    request: EstimateRequest,
    *,
    now: datetime,
    lang: Lang,
    rate: ExchangeRate,
    price_max_age_days: int = DEFAULT_PRICE_MAX_AGE_DAYS,
) -> Option:
    """One workload on one explicit configuration; one that cannot run answers feasible=false with the reason."""
    resolved = normalise(request.workload, catalog)
    gpu = catalog.gpu(request.gpu)
    if gpu is None:
        raise unknown_name(catalog, "gpu", request.gpu, "gpu")
    providers = [request.provider] if request.provider else None
    check_providers(catalog, providers, "provider")
    constraints = Constraints(
        providers=providers,
        pricing=[request.pricing] if request.pricing else list(DEFAULT_PRICING),
        gpu_count=request.gpu_count,
        max_gpus=request.gpu_count,
        max_nodes=512,
        require_offer=False,
    )
    plan = Plan(
        catalog=catalog,
        resolved=resolved,
        constraints=constraints,
        lang=lang,
        today=now.date(),
        forced=request.parallelism,
        max_batch=request.max_batch,
        price_max_age_days=price_max_age_days,
        sizers=SIZERS,
    )
    money = Money(currency=request.currency, rate=rate)
    try:
        candidate = PLANNERS[plan.kind](plan, gpu)
    except Excluded as reason:
        return infeasible(plan, gpu, request.gpu_count, reason)
    cost = option_cost(plan, candidate, money)
    breakdown = scores(plan, [candidate], "balanced")[0]
    return build_option(plan, candidate, 1, breakdown, cost, total(breakdown, "balanced"), money)
