"""Facts shared by every request on one catalog, keyed by frozen values that name everything each one depends on.

A key names the part of the catalog it was derived from (`reads`: the tables offers reference and the models, those
and one GPU's offers, or the whole snapshot; with the calibration ledger's version), the catalog model (a pasted
model's facts are never shared) and every other input: two requests share a fact only when every input the fact
depends on is the same, whatever else they differ in and whatever came before them. A price change therefore costs
the next request its rentals and checks of that GPU, not every speed and layout again.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from itertools import islice
from typing import Any, ClassVar, TypeVar

import msgspec

from domain.catalog import Reads
from domain.performance.layout import Layout
from domain.performance.training import Shape
from domain.workloads.requests import LayoutRequest

# Requests vary in lengths and caps, so the store is bounded (see Facts).
FACTS_MAX = 8192
T = TypeVar("T")


class Key(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Base of every part of a key: frozen, hashable, equal only to a key of the same type and fields."""


class OffersAllowed(Key, frozen=True, kw_only=True, gc=False, cache_hash=True):
    """What decides the catalog offers a request may use."""

    pricing: tuple[str, ...]
    providers: tuple[str, ...] | None


class TrainingShape(Key, frozen=True, kw_only=True, gc=False, cache_hash=True):
    """Everything of a training or fine-tuning workload but its deadline: what its speeds and layouts depend on."""

    kind: str
    method: str
    optimizer: str
    lora_rank: int | None
    sequence_length: int
    precision: str
    train_tokens: float


class InferenceCheck(Key, frozen=True, kw_only=True, gc=False, cache_hash=True):
    """What an inference request's checks before a GPU's layout search depend on besides the GPU."""

    precision: str
    kv_precision: str
    tokens: int
    engine: str
    forced: LayoutRequest | None
    fixed: int | None
    max_gpus: int
    offers: OffersAllowed | None
    require_offer: bool


class TrainingCheck(Key, frozen=True, kw_only=True, gc=False, cache_hash=True):
    """What a training request's checks before a GPU's layout search depend on besides the GPU."""

    shape: TrainingShape
    counts: tuple[int, ...]
    offers: OffersAllowed | None
    require_offer: bool


class ImageCheck(Key, frozen=True, kw_only=True, gc=False, cache_hash=True):
    """What an image request's checks depend on besides the GPU."""

    precision: str
    width: int
    height: int
    steps: int
    offers: OffersAllowed | None
    require_offer: bool


class Fact(Key, frozen=True, kw_only=True, gc=False):
    """Base of every shared fact's key: the catalog it was derived from (`Catalog.derived_key` of what it reads)."""

    # A kind that reads one GPU's offers names the GPU in its `gpu` field.
    reads: ClassVar[Reads] = "all"
    catalog: str


class ModelFact(Fact, frozen=True, kw_only=True, gc=False):
    """A fact of one catalog model."""

    model: str


class ServingShape(Key, frozen=True, kw_only=True, gc=False, cache_hash=True):
    """What a model copy's memory and speed depend on besides the GPU and the layout."""

    precision: str
    kv_precision: str
    input_tokens: int
    output_tokens: int
    engine: str
    max_batch: int | None


class CopyFact(ModelFact, frozen=True, kw_only=True, gc=False):
    """One model copy's memory, batch cap and speed model."""

    reads: ClassVar[Reads] = "structure"

    shape: ServingShape
    gpu: str
    layout: Layout


class LayoutsFact(ModelFact, frozen=True, kw_only=True, gc=False):
    """The layouts of one copy on an NVLink domain of `domain` GPUs, and their memory shapes."""

    reads: ClassVar[Reads] = "structure"

    precision: str
    kv_precision: str
    tokens: int
    max_gpus: int
    fixed: int | None
    domain: int
    forced: LayoutRequest | None


class CopyAssumptionsFact(ModelFact, frozen=True, kw_only=True, gc=False):
    """The assumptions behind one copy's figures."""

    reads: ClassVar[Reads] = "structure"

    shape: ServingShape
    gpu: str
    layout: Layout
    lang: str


class ImageSpeedFact(ModelFact, frozen=True, kw_only=True, gc=False):
    """Memory, batch and seconds per image of one image shape on one GPU."""

    reads: ClassVar[Reads] = "structure"

    gpu: str
    precision: str
    width: int
    height: int
    steps: int


class TrainingSpeedFact(ModelFact, frozen=True, kw_only=True, gc=False):
    """How fast a training shape runs on one GPU in one scenario, for any layout."""

    reads: ClassVar[Reads] = "structure"

    shape: TrainingShape
    gpu: str
    scenario: str


class TrainingFirstFact(ModelFact, frozen=True, kw_only=True, gc=False):
    """The fewest of `counts` GPUs with a layout that fits in `usable_bytes` each."""

    reads: ClassVar[Reads] = "structure"

    shape: TrainingShape
    usable_bytes: float
    counts: tuple[int, ...]


class TrainingBestFact(ModelFact, frozen=True, kw_only=True, gc=False):
    """The fastest layout of `gpus` GPUs within `usable` bytes each, and the runner-up."""

    reads: ClassVar[Reads] = "structure"

    shape: TrainingShape
    gpu: str
    usable: float
    gpus: int


class TrainingRunsFact(ModelFact, frozen=True, kw_only=True, gc=False):
    """The run of one layout in every scenario."""

    reads: ClassVar[Reads] = "structure"

    shape: TrainingShape
    gpu: str
    gpus: int
    layout: Shape


class TrainingCauseFact(ModelFact, frozen=True, kw_only=True, gc=False):
    """Why the chosen training layout beats the runner-up."""

    reads: ClassVar[Reads] = "structure"

    shape: TrainingShape
    gpu: str
    chosen: tuple[int, Shape, float]
    runner_up: tuple[int, Shape, float]


class CheckFact(ModelFact, frozen=True, kw_only=True, gc=False):
    """One GPU's check result or its exclusion, in one language (an exclusion's reason is text)."""

    reads: ClassVar[Reads] = "gpu_offers"

    check: InferenceCheck | TrainingCheck | ImageCheck
    gpu: str
    lang: str


class RentBounds(Key, frozen=True, kw_only=True, gc=False, cache_hash=True):
    """The limits a rental must stay within."""

    max_gpus: int
    max_nodes: int
    single_node: bool


class RentFact(Fact, frozen=True, kw_only=True, gc=False):
    """The cheapest rental of `gpus` GPUs, `per_machine` a machine."""

    reads: ClassVar[Reads] = "gpu_offers"

    gpu: str
    gpus: int
    per_machine: int
    exact: bool
    bounds: RentBounds | None
    offers: OffersAllowed


class UnrentedFact(Fact, frozen=True, kw_only=True, gc=False):
    """Why no offer of a GPU is allowed."""

    reads: ClassVar[Reads] = "gpu_offers"

    gpu: str
    offers: OffersAllowed
    lang: str


class ExclusionFact(Fact, frozen=True, kw_only=True, gc=False):
    """An exclusion's text."""

    reads: ClassVar[Reads] = "structure"

    gpu: str
    lang: str
    code: str
    figures: tuple[tuple[str, Any], ...]


class StaleOffersFact(Fact, frozen=True, kw_only=True, gc=False):
    """How many of the allowed offers are too old to rely on."""

    reads: ClassVar[Reads] = "all"

    offers: OffersAllowed
    today: date
    max_age_days: int


class NotesFact(Fact, frozen=True, kw_only=True, gc=False):
    """The reasons and warnings every option of a GPU and offer shares."""

    reads: ClassVar[Reads] = "gpu_offers"

    gpu: str
    offer: str | None
    kind: str
    lang: str
    today: date
    require_offer: bool


class OwnedMonthlyFact(Fact, frozen=True, kw_only=True, gc=False):
    """What owning `gpu_count` GPUs costs a month."""

    reads: ClassVar[Reads] = "structure"

    gpu: str
    gpu_count: int
    today: date
    lang: str


class Facts:
    """A bounded store of facts by their keys; a fact, once built, never changes.

    Segmented: a new fact waits on probation (a fifth of the store) and joins the protected rest when asked for
    again. A stream of one-off requests (each new load, length or budget builds a few hundred facts) then turns over
    the probation alone, instead of flushing the facts every repeated request shares: those would otherwise be built
    again, at several times the cost, each time the catalog changes and the answers cached by version must be
    computed again.
    """

    def __init__(self, limit: int = FACTS_MAX) -> None:
        self.limit = limit
        self._probation: dict[Fact, Any] = {}
        self._protected: dict[Fact, Any] = {}

    def get(self, key: Fact, build: Callable[[], T]) -> T:
        """The fact under `key`, built once."""
        protected = self._protected
        try:
            found: T = protected[key]
        except KeyError:
            pass
        else:
            # Least recently used goes first: a hit moves the fact to the end.
            del protected[key]
            protected[key] = found
            return found
        probation = self._probation
        try:
            found = probation.pop(key)
        except KeyError:
            found = probation[key] = build()
            _trim(probation, max(1, self.limit // 5))
            return found
        protected[key] = found
        _trim(protected, max(1, self.limit - len(probation)))
        return found

    def peek(self, key: Fact) -> Any:
        """The fact under `key` if it was built, else None."""
        return self._protected.get(key, self._probation.get(key))

    def items(self) -> list[tuple[Fact, Any]]:
        return [*self._protected.items(), *self._probation.items()]

    def clear(self) -> None:
        self._probation.clear()
        self._protected.clear()

    def __len__(self) -> int:
        return len(self._probation) + len(self._protected)


def _trim(store: dict[Fact, Any], limit: int) -> None:
    """Drop the oldest entries beyond `limit`."""
    if len(store) > limit:
        for old in list(islice(store, len(store) - limit)):
            del store[old]


# The process's store: keys name the catalog, so snapshots (and their versions) never mix.
SHARED = Facts()
