"""What one request fixes for every GPU: the plan, the candidates it yields and the exclusions it raises."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date
from functools import cached_property
from typing import Any, TypeVar

from domain.catalog import Catalog, Gpu, Offer
from domain.hardware.efficiency import Scenario
from domain.narrative.explain import say
from domain.planning.facts import (
    SHARED,
    CheckFact,
    Fact,
    ImageCheck,
    InferenceCheck,
    ModelFact,
    OffersAllowed,
    TrainingCheck,
)
from domain.pricing.costs import DEFAULT_PRICE_MAX_AGE_DAYS, Rental, allowed_offers, with_user_prices
from domain.workloads.requests import DEFAULT_PRICING, Constraints, Currency, Lang, LayoutRequest, workload_kind
from domain.workloads.resolve import Resolved
from domain.workloads.results import (
    Assumption,
    ExchangeRate,
    Exclusion,
    MemoryUse,
    Parallelism,
    PerformanceEstimate,
    Range,
    rounded,
)

T = TypeVar("T")
F = TypeVar("F", bound=Fact)


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
    """Everything fixed for one request; what it shares with other requests is keyed by what each fact depends on."""

    catalog: Catalog
    resolved: Resolved
    constraints: Constraints
    lang: Lang
    today: date
    forced: LayoutRequest | None = None
    max_batch: int | None = None
    price_max_age_days: int = DEFAULT_PRICE_MAX_AGE_DAYS
    # How each workload kind sizes a request (the planners' own), so the sizing is built once per plan.
    sizers: Mapping[str, Callable[[Plan], Any]] = field(default_factory=dict, compare=False, hash=False)
    # Per missed latency target, the best figure any GPU's configurations reach: gathered while this request is
    # planned (part of its answer, never shared with another request).
    reached: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @cached_property
    def sizing(self) -> Any:
        """This request's sizing: what its planner computes once for every GPU."""
        return self.sizers[self.kind](self)

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
    def offers_key(self) -> OffersAllowed | None:
        """What decides the offers a request may use, for facts shared across requests; None with the user's prices."""
        # None because the user's own prices are the request's alone.
        if self.constraints.prices:
            return None
        providers = self.constraints.providers
        return OffersAllowed(pricing=self.pricing, providers=None if providers is None else tuple(providers))

    def offers(self, gpu: Gpu) -> list[Offer]:
        return self._allowed_offers.get(gpu.id, [])

    def say(self, code: str, **figures: object) -> str:
        return say(code, self.lang, **figures)

    @cached_property
    def model_key(self) -> str | None:
        """The model's id when it is the catalog's own; a pasted model is the request's alone and never shared."""
        model = self.resolved.model
        return model.id if self.catalog.model(model.id) is model else None

    def fact_key(self, kind: type[F], /, **inputs: Any) -> F:
        """The key of a fact of `inputs` and the part of the catalog its kind reads."""
        return kind(catalog=self.catalog.derived_key(kind.reads, inputs.get("gpu")), **inputs)

    def derived(self, kind: type[ModelFact], build: Callable[[], T], /, **inputs: Any) -> T:
        """A fact of the catalog and its model and `inputs`, built once for every request on this catalog."""
        if self.model_key is None:
            return build()
        return SHARED.get(self.fact_key(kind, model=self.model_key, **inputs), build)

    def shared(self, kind: type[Fact], build: Callable[[], T], /, **inputs: Any) -> T:
        """A fact of the catalog and `inputs` alone, built once for every request on this catalog."""
        return SHARED.get(self.fact_key(kind, **inputs), build)

    def checked(self, check: InferenceCheck | TrainingCheck | ImageCheck, gpu: Gpu, run: Callable[[], T]) -> T:
        """A GPU's check result or its exclusion (`check`: what else it depends on), shared like `derived`."""
        if self.model_key is None or check.offers is None:
            found = self._check(gpu, run)
        else:
            key = self.fact_key(CheckFact, model=self.model_key, check=check, gpu=gpu.id, lang=self.lang)
            found = SHARED.get(key, lambda: self._check(gpu, run))
        value, excluded = found
        if excluded is not None:
            raise Excluded(excluded[0], **excluded[1])
        return value  # type: ignore[no-any-return]

    def _check(self, gpu: Gpu, run: Callable[[], Any]) -> tuple[Any, Any]:
        try:
            return (run(), None)
        except Excluded as error:
            # The code and figures only: a kept exception would keep its traceback's frames (and the catalog).
            code, figures = error.code, dict(error.figures)
            return (None, (code, figures, Exclusion(gpu=gpu.id, code=code, reason=self.say(code, **figures))))

    def known_exclusion(self, gpu: Gpu) -> Exclusion | None:
        """The exclusion this request's check already gave this GPU (on an earlier request), without planning it."""
        check = self.sizing.check
        if self.model_key is None or check.offers is None:
            return None
        found = SHARED.peek(self.fact_key(CheckFact, model=self.model_key, check=check, gpu=gpu.id, lang=self.lang))
        return found[1][2] if found is not None and found[1] is not None else None  # type: ignore[no-any-return]


def as_range(values: dict[Scenario, float]) -> Range:
    """Expected from the expected scenario; low/high are the smaller/larger of the two ends of the band."""
    ends = (values["pessimistic"], values["optimistic"])
    return Range(expected=rounded(values["expected"]), low=rounded(min(ends)), high=rounded(max(ends)))


def headroom_pct(capacity: float, required: float) -> float:
    """Share of the capacity left over, in percent."""
    return round(100 * (capacity - required) / capacity, 1)
