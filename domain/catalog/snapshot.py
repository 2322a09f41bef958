"""The catalog snapshot: every record of one catalog version, indexed and checked once, immutable after construction."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, TypeVar

from domain.catalog.digest import DIGEST_MODULUS, deltas_by_gpu, offers_digest, structure_digest, version_of
from domain.catalog.names import closest
from domain.catalog.records import (
    MAX_NAME_LENGTH,
    CatalogError,
    DiffusionModel,
    Gpu,
    ModelSpec,
    Offer,
    Pricing,
    Provider,
    Record,
    System,
    lookup_key,
    sparse_problems,
)

R = TypeVar("R", bound=Record)
# What a value derived from a snapshot reads of it: the tables offers reference and the models, those and one GPU's
# offers, or everything.
Reads = Literal["structure", "gpu_offers", "all"]


class Catalog:
    """An immutable snapshot of the whole catalog with lookup indexes and a content-hash version."""

    __slots__ = (
        "_aliases",
        "_gpu_keys",
        "_gpus",
        "_models",
        "_offer_digests_by_gpu",
        "_offers_by_gpu",
        "_providers",
        "_sealed",
        "_systems",
        "_systems_by_gpu",
        "accuracy",
        "gpus",
        "key",
        "models",
        "offers",
        "offers_digest",
        "providers",
        "structure_digest",
        "structure_key",
        "systems",
        "version",
    )

    def __init__(
        self,
        *,
        gpus: Iterable[Gpu],
        systems: Iterable[System],
        providers: Iterable[Provider],
        offers: Iterable[Offer],
        models: Iterable[ModelSpec],
        accuracy: Any = None,
    ) -> None:
        self.gpus = tuple(sorted(gpus, key=lambda r: r.id))
        self.systems = tuple(sorted(systems, key=lambda r: r.id))
        self.providers = tuple(sorted(providers, key=lambda r: r.id))
        self.models = tuple(sorted(models, key=lambda r: r.id))
        # The calibration ledger (domain.calibration.ledger.Ledger) that sets bands and confidence, if any.
        self.accuracy: Any = accuracy
        problems: list[str] = []
        self._gpus = _index("gpu", self.gpus, problems)
        self._systems = _index("system", self.systems, problems)
        self._providers = _index("provider", self.providers, problems)
        self._models = _index("model", self.models, problems)
        self._aliases: dict[str, dict[str, str]] = {
            "gpu": _alias_index("gpu", self.gpus, problems),
            "system": _alias_index("system", self.systems, problems),
            "model": _alias_index("model", self.models, problems),
        }
        for gpu in self.gpus:
            problems.extend(sparse_problems(gpu))
        problems.extend(self._reference_problems())
        offers = tuple(sorted(offers, key=lambda r: r.id))
        problems.extend(self._offer_problems(offers))
        if problems:
            raise CatalogError(problems)
        systems_by_gpu: dict[str, list[System]] = {}
        for system in self.systems:
            systems_by_gpu.setdefault(system.gpu, []).append(system)
        self._systems_by_gpu = {gpu: tuple(items) for gpu, items in systems_by_gpu.items()}
        self.structure_digest = structure_digest(self.gpus, self.systems, self.providers, self.models)
        self._set_offers(offers, None)

    def _set_offers(self, offers: tuple[Offer, ...], digests_by_gpu: dict[str, int] | None) -> None:
        """Index the offers (sorted by id, checked) and seal the snapshot under the version they make; each GPU's
        offers' digest is computed here unless given (a change moves only the GPUs it touched)."""
        self.offers = offers
        offers_by_gpu: dict[str, list[Offer]] = {}
        for offer in offers:
            offers_by_gpu.setdefault(offer.gpu, []).append(offer)
        self._offers_by_gpu = {gpu: tuple(items) for gpu, items in offers_by_gpu.items()}
        if digests_by_gpu is None:
            digests_by_gpu = {gpu: offers_digest(items) for gpu, items in offers_by_gpu.items()}
        self._offer_digests_by_gpu = digests_by_gpu
        self.offers_digest = sum(digests_by_gpu.values()) % DIGEST_MODULUS
        self.version = version_of(self.structure_digest, self.offers_digest)
        self._set_keys()
        self._sealed = True

    def _set_keys(self) -> None:
        """The keys of what is derived from this snapshot (`derived_key`), each GPU's written once: asked for
        thousands of times."""
        self.key = _key(self.version, self.accuracy)
        # "s" sets it apart from any version (a 16-digit number alone).
        self.structure_key = _key(f"s{self.structure_digest:016x}", self.accuracy)
        digests = self._offer_digests_by_gpu
        self._gpu_keys = {gpu.id: f"{self.structure_key}/{digests.get(gpu.id, 0):016x}" for gpu in self.gpus}

    def derived_key(self, reads: Reads, gpu: str | None = None) -> str:
        """What a value derived from this snapshot depends on when it reads only `reads` (`gpu`: whose offers).

        A price change then leaves every value that never read that GPU's offers shared with the snapshot before.
        """
        if reads == "structure":
            return self.structure_key
        if reads == "gpu_offers" and gpu is not None:
            return self._gpu_keys.get(gpu, self.key)
        return self.key

    def with_offers(self, upserts: Sequence[Offer], deletes: Iterable[str] = ()) -> Catalog:
        """This snapshot with these offers replaced or added and those removed; only the new offers are checked.

        The other tables are shared with this snapshot, and the version moves by the offers' difference: a price
        change costs a fraction of building the catalog again, which every instance does for every change.
        """
        self.check_offers(upserts)
        replaced = set(deletes) | {offer.id for offer in upserts}
        kept = [offer for offer in self.offers if offer.id not in replaced]
        removed = [offer for offer in self.offers if offer.id in replaced]
        by_gpu = dict(self._offer_digests_by_gpu)
        for gpu, delta in deltas_by_gpu(upserts, removed).items():
            by_gpu[gpu] = (by_gpu.get(gpu, 0) + delta) % DIGEST_MODULUS
        copy = object.__new__(Catalog)
        for name in _STRUCTURE_SLOTS:
            object.__setattr__(copy, name, getattr(self, name))
        copy._set_offers(tuple(sorted([*kept, *upserts], key=lambda r: r.id)), by_gpu)
        return copy

    def with_offer_list(self, offers: Sequence[Offer]) -> Catalog:
        """This snapshot with exactly these offers (those equal to its own kept, the others swapped in or out)."""
        known = {offer.id: offer for offer in self.offers}
        live = {offer.id for offer in offers}
        return self.with_offers([o for o in offers if known.get(o.id) != o], [i for i in known if i not in live])

    def __setattr__(self, name: str, value: Any) -> None:
        if getattr(self, "_sealed", False):
            raise AttributeError(f"a catalog snapshot is immutable: cannot set {name!r}")
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a catalog snapshot is immutable: cannot delete {name!r}")

    def with_accuracy(self, accuracy: Any) -> Catalog:
        """The same snapshot with this calibration ledger (no second validation)."""
        copy = object.__new__(Catalog)
        for name in Catalog.__slots__:
            if name not in ("_sealed", "_gpu_keys", "accuracy", "key", "structure_key"):
                object.__setattr__(copy, name, getattr(self, name))
        object.__setattr__(copy, "accuracy", accuracy)
        copy._set_keys()
        object.__setattr__(copy, "_sealed", True)
        return copy

    def _reference_problems(self) -> list[str]:
        problems = []
        for system in self.systems:
            gpu = self._gpus.get(system.gpu)
            if gpu is None:
                problems.append(f"system {system.id!r}: unknown gpu {system.gpu!r}")
                continue
            expected = gpu.memory_gb * system.gpu_count
            if abs(system.total_memory_gb - expected) > 0.01 * expected:
                problems.append(
                    f"system {system.id!r}: total_memory_gb {system.total_memory_gb:g} is not "
                    f"{system.gpu_count} x {gpu.memory_gb:g} GB"
                )
        for model in self.models:
            problems.extend(_model_problems(model))
        return problems

    def check_offers(self, offers: Sequence[Offer]) -> None:
        """Raise CatalogError when these offers could not join this snapshot (what with_offers checks, without
        building the snapshot)."""
        if problems := self._offer_problems(offers):
            raise CatalogError(problems)

    def _offer_problems(self, offers: Sequence[Offer]) -> list[str]:
        """Duplicate ids among the offers, and GPUs or providers they name that this snapshot lacks."""
        problems: list[str] = []
        _index("offer", offers, problems)
        for offer in offers:
            if offer.gpu not in self._gpus:
                problems.append(f"offer {offer.id!r}: unknown gpu {offer.gpu!r}")
            if offer.provider not in self._providers:
                problems.append(f"offer {offer.id!r}: unknown provider {offer.provider!r}")
        return problems

    def gpu(self, name: str) -> Gpu | None:
        """The GPU with this id or alias."""
        return self._resolve("gpu", self._gpus, name)

    def system(self, name: str) -> System | None:
        """The system with this id or alias."""
        return self._resolve("system", self._systems, name)

    def model(self, name: str) -> ModelSpec | None:
        """The workload model with this id or alias."""
        return self._resolve("model", self._models, name)

    def provider(self, provider_id: str) -> Provider | None:
        """The provider with this id."""
        return self._providers.get(provider_id)

    def offers_for_gpu(self, gpu_id: str) -> tuple[Offer, ...]:
        """Every offer for this GPU, ordered by id."""
        return self._offers_by_gpu.get(gpu_id, ())

    def systems_for_gpu(self, gpu_id: str) -> tuple[System, ...]:
        """Every system built on this GPU, ordered by id."""
        return self._systems_by_gpu.get(gpu_id, ())

    def lowest_prices(self, gpu_id: str) -> dict[Pricing, Offer]:
        """The cheapest offer per pricing model for this GPU (ties broken by offer id)."""
        best: dict[Pricing, Offer] = {}
        for offer in self.offers_for_gpu(gpu_id):
            current = best.get(offer.pricing)
            if current is None or offer.usd_per_gpu_hour < current.usd_per_gpu_hour:
                best[offer.pricing] = offer
        return best

    def suggest(self, kind: Literal["gpu", "system", "model"], name: str, limit: int = 3) -> list[str]:
        """Ids whose id or aliases are closest to a name that did not resolve."""
        if len(name) > MAX_NAME_LENGTH:
            return []
        aliases = self._aliases[kind]
        key = lookup_key(name)
        suggestions = closest(key, aliases, limit)
        if not suggestions:
            suggestions = list(dict.fromkeys(record_id for alias, record_id in aliases.items() if key and key in alias))
        return suggestions[:limit]

    def _resolve(self, kind: str, by_id: Mapping[str, R], name: str) -> R | None:
        record = by_id.get(name)
        if record is None:
            record_id = self._aliases[kind].get(lookup_key(name))
            record = by_id.get(record_id) if record_id else None
        return record


# What a snapshot with other offers shares with this one.
_STRUCTURE_SLOTS = (
    "_aliases",
    "_gpus",
    "_models",
    "_providers",
    "_systems",
    "_systems_by_gpu",
    "accuracy",
    "gpus",
    "models",
    "providers",
    "structure_digest",
    "systems",
)


def _key(version: str, accuracy: Any) -> str:
    """What facts derived from a snapshot depend on: its content and its calibration ledger's."""
    return version if accuracy is None else f"{version}:{accuracy.version}"


def _index(kind: str, records: Sequence[R], problems: list[str]) -> dict[str, R]:
    index: dict[str, R] = {}
    for record in records:
        record_id = record.id  # type: ignore[attr-defined]
        if record_id in index:
            problems.append(f"{kind} {record_id!r}: duplicate id")
        index[record_id] = record
    return index


def _alias_index(kind: str, records: Sequence[Any], problems: list[str]) -> dict[str, str]:
    aliases: dict[str, str] = {}
    for record in records:
        if len(record.name) > MAX_NAME_LENGTH:
            # Every store's name column holds this many characters: a longer name fits one store and not another.
            problems.append(f"{kind} {record.id!r}: name longer than {MAX_NAME_LENGTH} characters")
        for name in (record.id, record.name, *record.aliases):
            key = lookup_key(name)
            if not key:
                problems.append(f"{kind} {record.id!r}: alias {name!r} has no letters or digits")
                continue
            owner = aliases.setdefault(key, record.id)
            if owner != record.id:
                problems.append(f"{kind} {record.id!r}: alias {name!r} already names {owner!r}")
    return aliases


def _model_problems(model: ModelSpec) -> list[str]:
    if isinstance(model, DiffusionModel):
        return []
    problems = []
    if model.attention == "mla" and model.mla is None:
        problems.append(f"model {model.id!r}: attention 'mla' needs the mla table")
    if model.attention in ("mha", "gqa") and model.kv_heads is None:
        problems.append(f"model {model.id!r}: attention {model.attention!r} needs kv_heads")
    if model.attention == "mha" and model.kv_heads not in (None, model.attention_heads):
        problems.append(f"model {model.id!r}: MHA needs kv_heads == attention_heads")
    if model.moe is not None and model.moe.experts_per_token >= model.moe.routed_experts:
        problems.append(f"model {model.id!r}: experts_per_token must be fewer than routed_experts")
    if model.moe is not None and model.active_params_b is None:
        problems.append(f"model {model.id!r}: a mixture-of-experts model needs active_params_b")
    if model.linear_attention_layers >= model.layers:
        problems.append(f"model {model.id!r}: linear_attention_layers must leave at least one attention layer")
    if model.active_params_b is not None and model.active_params_b > model.params_b:
        problems.append(f"model {model.id!r}: active_params_b exceeds params_b")
    return problems
