"""What one request fixes for every GPU: the plan, the candidates it yields and the exclusions it raises."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from functools import cached_property
from itertools import islice
from typing import Annotated, Any, TypeVar

import msgspec

from domain.catalog import Catalog, Gpu, Offer, Pricing
from domain.efficiency import Scenario
from domain.estimates import (
    Assumption,
    Currency,
    ExchangeRate,
    Exclusion,
    Lang,
    MemoryUse,
    Parallelism,
    PerformanceEstimate,
    Range,
)
from domain.explain import say
from domain.pricing import DEFAULT_PRICE_MAX_AGE_DAYS, Rental, allowed_offers, with_user_prices
from domain.workloads import DEFAULT_PRICING, Constraints, Objective, Resolved, Workload, WorkloadSpec, workload_kind

LIMIT_MAX = 50
GPUS_PER_NODE = 8
# Requests vary in lengths and caps, so a catalog's store of derived facts is bounded (oldest entries go first).
DERIVED_MAX = 8192
T = TypeVar("T")


class RecommendationRequest(WorkloadSpec, kw_only=True, frozen=True):
    """A workload, what the answer may contain and how to rank it."""

    workload: Workload
    constraints: Constraints | None = None
    objective: Annotated[
        Objective,
        msgspec.Meta(
            description="balanced: the cheapest way to meet the need first, then maturity, headroom and scaling. "
            "cost: the cheapest way to meet the need first, the score (80% of it cost) breaking ties. "
            "speed: the fastest configuration among those that meet the targets."
        ),
    ] = "balanced"
    currency: Currency = "USD"
    lang: Lang | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=LIMIT_MAX)] = 10


class LayoutRequest(WorkloadSpec, kw_only=True, frozen=True):
    """A layout forced on one model copy."""

    tensor: Annotated[int, msgspec.Meta(ge=1, le=1024, description="GPUs one layer is split over.")] = 1
    pipeline: Annotated[int, msgspec.Meta(ge=1, le=256, description="Pipeline stages of one model copy.")] = 1
    expert: Annotated[
        int, msgspec.Meta(ge=1, le=1024, description="GPUs the routed experts are split over (MoE); 1 = none.")
    ] = 1


class EstimateRequest(WorkloadSpec, kw_only=True, frozen=True):
    """A workload on one explicit configuration."""

    workload: Workload
    gpu: Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
    gpu_count: Annotated[int, msgspec.Meta(ge=1, le=4096)]
    provider: Annotated[str, msgspec.Meta(max_length=64)] | None = None
    pricing: Pricing | None = None
    currency: Currency = "USD"
    lang: Lang | None = None
    parallelism: (
        Annotated[
            LayoutRequest,
            msgspec.Meta(description="Force this layout per model copy; without it the layout is searched."),
        ]
        | None
    ) = None
    max_batch: (
        Annotated[
            int,
            msgspec.Meta(
                ge=1,
                le=65_536,
                description="Sequences in flight per model copy; replaces the engine's default cap, above it too "
                "(the launch command sets the engine's flag).",
            ),
        ]
        | None
    ) = None


@dataclass(frozen=True)
class Money:
    """How money figures are shown: USD, or CNY at a stated rate."""

    currency: Currency
    rate: ExchangeRate

    @property
    def factor(self) -> float:
        return self.rate.usd_to_cny if self.currency == "CNY" else 1.0


@dataclass
class Candidate:
    """One configuration of one GPU, before scoring."""

    gpu: Gpu
    gpu_count: int
    nodes: int
    parallelism: Parallelism
    rental: Rental | None
    memory: MemoryUse
    performance: PerformanceEstimate
    unmet: list[str]
    reasons: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    assumptions: list[Assumption] = field(default_factory=list)
    perf_value: float = 0.0  # higher is better
    need_value: float | None = None  # what was asked in the same unit as perf_value; None when nothing was
    unit_cost_usd: float | None = None  # per million tokens, per run or per 1000 images
    layout_reason: str | None = None
    launch: Any = None  # domain.launch.Launch, set by planners that know how to run the layout


class Excluded(Exception):
    """A GPU that cannot be an option; carries the message code and its figures."""

    def __init__(self, code: str, **figures: object) -> None:
        super().__init__(code)
        self.code = code
        self.figures = figures


@dataclass(frozen=True)
class Plan:
    """Everything fixed for one request; derived facts are computed once per request and kept in `memo`."""

    catalog: Catalog
    resolved: Resolved
    constraints: Constraints
    lang: Lang
    today: date
    forced: LayoutRequest | None = None
    max_batch: int | None = None
    price_max_age_days: int = DEFAULT_PRICE_MAX_AGE_DAYS
    memo: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @cached_property
    def pricing(self) -> tuple[str, ...]:
        return tuple(self.constraints.pricing or DEFAULT_PRICING)

    @property
    def fixed_count(self) -> int | None:
        return self.constraints.gpu_count

    @cached_property
    def kind(self) -> str:
        return workload_kind(self.resolved.workload)

    @cached_property
    def _allowed_offers(self) -> dict[str, list[Offer]]:
        """Offers under the allowed pricing models and providers by GPU id, in the catalog's (id) order."""
        by_gpu: dict[str, list[Offer]] = {}
        allowed = allowed_offers(self.catalog.offers, self.pricing, self.constraints.providers)
        # A user's own (negotiated) price replaces the catalog's offers of that GPU for this request.
        for offer in with_user_prices(allowed, self.constraints.prices, self.pricing[0], self.today):
            by_gpu.setdefault(offer.gpu, []).append(offer)
        return by_gpu

    @cached_property
    def offers_key(self) -> tuple[Any, ...] | None:
        """What decides the offers a request may use, for facts shared across requests; None with the user's prices."""
        # None because the user's own prices are the request's alone.
        if self.constraints.prices:
            return None
        providers = self.constraints.providers
        return (self.pricing, None if providers is None else tuple(providers))

    def offers(self, gpu: Gpu) -> list[Offer]:
        return self._allowed_offers.get(gpu.id, [])

    def say(self, code: str, **figures: object) -> str:
        return say(code, self.lang, **figures)

    @cached_property
    def model_key(self) -> str | None:
        """The model's id when it is the catalog's own; a pasted model is the request's alone and never shared."""
        model = self.resolved.model
        return model.id if self.catalog.model(model.id) is model else None

    def derived(self, key: tuple[Any, ...], build: Callable[[], T]) -> T:
        """A fact that depends only on the catalog and the model, built once for every request on this catalog."""
        if self.model_key is None:
            return build()
        return self.shared((self.model_key, *key), build)

    def checked(self, key: tuple[Any, ...], gpu: Gpu, check: Callable[[], T]) -> T:
        """A GPU's check result or its exclusion (`key`: what else it depends on), shared like `derived`."""
        results = self._checks(key)
        found = results.get(gpu.id)
        if found is None:
            try:
                found = (check(), None)
            except Excluded as error:
                # The code and figures only: a kept exception would keep its traceback's frames (and the catalog).
                code, figures = error.code, dict(error.figures)
                found = (None, (code, figures, Exclusion(gpu=gpu.id, code=code, reason=self.say(code, **figures))))
            results[gpu.id] = found
        value, excluded = found
        if excluded is not None:
            raise Excluded(excluded[0], **excluded[1])
        return value  # type: ignore[return-value]

    def _checks(self, key: tuple[Any, ...]) -> dict[str, tuple[Any, Any]]:
        """The results by GPU id of the check `key`, in this request's language (an exclusion's reason is text)."""
        # A request runs one check key for every GPU, so its table is looked up once, not once per GPU.
        current = self.memo.get("checks")
        if current is not None and current[0] == key:
            return current[1]  # type: ignore[no-any-return]
        if current is not None:
            self.memo["mixed_checks"] = True
        full = ("checks", self.lang, *key)
        results: dict[str, tuple[Any, Any]] = {} if self.offers_key is None else self.derived(full, dict)
        self.memo["checks"] = (key, results)
        return results

    def known_exclusion(self, gpu: Gpu) -> Exclusion | None:
        """The exclusion this request's check already gave this GPU (on an earlier request), without planning it."""
        # Only while the request ran a single check key: the planners check each GPU first, with one key per request.
        current = self.memo.get("checks")
        if current is None or "mixed_checks" in self.memo:
            return None
        found = current[1].get(gpu.id)
        return found[1][2] if found is not None and found[1] is not None else None

    def shared(self, key: tuple[Any, ...], build: Callable[[], T]) -> T:
        """A fact that depends only on the catalog and `key`, built once for every request on this catalog."""
        store = self.catalog.derived
        try:
            found: T = store[key]
        except KeyError:
            if len(store) >= DERIVED_MAX:
                # The oldest quarter goes: the hot shapes of the last few thousand requests stay.
                for old in list(islice(store, max(1, DERIVED_MAX // 4))):
                    del store[old]
            found = store[key] = build()
        return found


def as_range(values: dict[Scenario, float]) -> Range:
    """Expected from the expected scenario; low/high are the smaller/larger of the two ends of the band."""
    ends = (values["pessimistic"], values["optimistic"])
    return Range(expected=rounded(values["expected"]), low=rounded(min(ends)), high=rounded(max(ends)))


def rounded(value: float) -> float:
    """Four significant digits: estimates are not more precise than that."""
    if value == 0 or not math.isfinite(value):
        return value
    if -1000 < value < 1000:
        return float(f"{value:.4g}")  # the same correctly rounded figure as round(), at a third of the cost
    return round(value, 0)


def headroom_pct(capacity: float, required: float) -> float:
    """Share of the capacity left over, in percent."""
    return round(100 * (capacity - required) / capacity, 1)
