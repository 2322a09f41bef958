"""Wire objects for one catalog snapshot, built once per version so a read only filters, sorts and encodes."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from datetime import date, datetime
from typing import Any, Literal

import msgspec

from api.adapters.storage.reference import with_ledger
from api.schemas import (
    GpuComparisonRead,
    GpuRatios,
    GpuRead,
    GpuRef,
    LowestPricesRead,
    ModelRead,
    OfferList,
    OfferRead,
    PriceRead,
    ProviderRead,
    SupportsRead,
    SystemRead,
)
from api.schemas.patterns import strip_spaces
from domain.catalog import Catalog, Gpu, Offer, Pricing
from domain.narrative.summaries import comparison_summary
from domain.pricing.compare import compare_gpus
from domain.workloads.requests import Lang

CatalogSource = Literal["database", "reference"]


def _wire(record: Any, wire_type: Any, **extra: Any) -> Any:
    return msgspec.convert(msgspec.to_builtins(record) | extra, wire_type, strict=False)


def price_read(offer: Offer) -> PriceRead:
    """An offer reduced to the figures a lowest-price entry shows."""
    return PriceRead(
        offer_id=offer.id,
        provider=offer.provider,
        usd_per_gpu_hour=offer.usd_per_gpu_hour,
        gpus_per_instance=offer.gpus_per_instance,
        as_of=offer.as_of,
        source=offer.source,
    )


def gpu_read(gpu: Gpu, catalog: Catalog) -> GpuRead:
    """A GPU as the API publishes it."""
    lowest = {pricing: price_read(offer) for pricing, offer in catalog.lowest_prices(gpu.id).items()}
    gpu_wire: GpuRead = _wire(
        gpu,
        GpuRead,
        supports=SupportsRead(fp8=gpu.supports_fp8, fp4=gpu.supports_fp4, nvlink=gpu.has_nvlink),
        lowest_price=LowestPricesRead(**lowest),
    )
    return gpu_wire


def offer_read(offer: Offer, today: date) -> OfferRead:
    """An offer as the API publishes it; its age depends on the day, so it is built per answer."""
    return OfferRead(
        id=offer.id,
        provider=offer.provider,
        gpu=offer.gpu,
        gpus_per_instance=offer.gpus_per_instance,
        pricing=offer.pricing,
        usd_per_gpu_hour=offer.usd_per_gpu_hour,
        usd_per_instance_hour=round(offer.usd_per_gpu_hour * offer.gpus_per_instance, 4),
        instance=offer.instance,
        vcpus=offer.vcpus,
        ram_gb=offer.ram_gb,
        bare_metal=offer.bare_metal,
        region=offer.region,
        tier=offer.tier,
        as_of=offer.as_of,
        age_days=offer.age_days(today),
        source=offer.source,
        notes=offer.notes,
    )


class CatalogView:
    """The published form of a catalog snapshot, with the snapshot it came from."""

    __slots__ = ("catalog", "gpus", "loaded_at", "models", "providers", "source", "systems", "version")

    def __init__(
        self, catalog: Catalog, *, source: CatalogSource, loaded_at: datetime, previous: CatalogView | None = None
    ) -> None:
        """`previous`: the view this one replaces, whose wire objects are kept where the records they show are."""
        self.catalog = with_ledger(catalog)
        self.version = catalog.version
        self.source: CatalogSource = source
        self.loaded_at = loaded_at
        # A price change elsewhere in the cluster rebuilds the GPUs whose lowest prices it moved, nothing else.
        same = previous if previous and previous.catalog.structure_digest == catalog.structure_digest else None
        self.gpus: dict[str, GpuRead] = {
            gpu.id: same.gpus[gpu.id]
            if same is not None and same.catalog.lowest_prices(gpu.id) == catalog.lowest_prices(gpu.id)
            else gpu_read(gpu, catalog)
            for gpu in catalog.gpus
        }
        self.systems: dict[str, SystemRead] = same.systems if same is not None else {}
        for system in catalog.systems if same is None else ():
            gpu = self.gpus[system.gpu]
            self.systems[system.id] = _wire(system, SystemRead, gpu=GpuRef(id=gpu.id, name=gpu.name, vendor=gpu.vendor))
        self.providers: dict[str, ProviderRead] = {
            provider.id: _wire(
                provider,
                ProviderRead,
                offer_count=sum(1 for offer in catalog.offers if offer.provider == provider.id),
            )
            for provider in catalog.providers
        }
        self.models: dict[str, ModelRead] = (
            same.models if same is not None else {model.id: _wire(model, ModelRead) for model in catalog.models}
        )


def comparison_read(view: CatalogView, gpus: list[Gpu], lang: Lang) -> GpuComparisonRead:
    """GPUs side by side with their ratios to the first, and a summary."""
    rows = compare_gpus(view.catalog, gpus)
    return GpuComparisonRead(
        baseline=gpus[0].id,
        items=[_in_language(view.gpus[gpu.id], gpu, lang) for gpu in gpus],
        ratios=[
            GpuRatios(
                gpu=row.gpu.id,
                memory_gb=row.memory_gb,
                memory_bandwidth_gbps=row.memory_bandwidth_gbps,
                bf16_tflops=row.bf16_tflops,
                fp8_tflops=row.fp8_tflops,
                tdp_w=row.tdp_w,
                usd_per_gpu_hour=row.usd_per_gpu_hour,
            )
            for row in rows
        ],
        summary=comparison_summary(view.catalog, rows, lang),
        lang=lang,
    )


def _in_language(read: GpuRead, gpu: Gpu, lang: Lang) -> GpuRead:
    """The GPU as published, with its notes in Chinese for a Chinese answer when the catalog has them."""
    if lang == "zh" and gpu.notes_zh:
        return msgspec.structs.replace(read, notes=gpu.notes_zh)
    return read


class NotInCatalog(LookupError):
    """A name a catalog read asked for that the catalog does not hold, with the closest ids."""

    def __init__(self, kind: str, name: str, suggestions: list[str]) -> None:
        hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(f"no {kind} {name!r} in the catalog{hint}")
        self.kind = kind
        self.name = name
        self.suggestions = suggestions


def find_gpu(catalog: Catalog, name: str) -> Gpu:
    """A GPU by id or alias; NotInCatalog with the closest ids otherwise."""
    gpu = catalog.gpu(name)
    if gpu is None:
        raise NotInCatalog("GPU", name, catalog.suggest("gpu", name))
    return gpu


def find_gpus(catalog: Catalog, names: Iterable[str]) -> list[Gpu]:
    """The GPUs named, in the order given; names of the same GPU are merged."""
    found: dict[str, Gpu] = {}
    for name in names:
        gpu = find_gpu(catalog, strip_spaces(name))
        found.setdefault(gpu.id, gpu)
    return list(found.values())


def find_provider(catalog: Catalog, name: str) -> str:
    """A provider id the catalog knows; NotInCatalog with the ids that contain or resemble the name otherwise."""
    if catalog.provider(name) is None:
        ids = [p.id for p in catalog.providers]
        close = [i for i in ids if name.lower() in i] or difflib.get_close_matches(name.lower(), ids, n=3, cutoff=0.5)
        raise NotInCatalog("provider", name, close[:3])
    return name


OfferSort = Literal["price", "gpu", "provider", "as_of"]
SortOrder = Literal["asc", "desc"]

_OFFER_KEYS: dict[str, Callable[[Offer], Any]] = {
    "price": lambda o: (o.usd_per_gpu_hour, o.id),
    "gpu": lambda o: (o.gpu, o.usd_per_gpu_hour, o.id),
    "provider": lambda o: (o.provider, o.usd_per_gpu_hour, o.id),
    "as_of": lambda o: (o.as_of, o.id),
}


def offer_list(
    catalog: Catalog,
    today: date,
    *,
    gpu_id: str | None = None,
    provider: str | None = None,
    pricing: Pricing | None = None,
    max_usd_per_gpu_hour: float | None = None,
    max_age_days: int | None = None,
    sort: OfferSort = "price",
    order: SortOrder | None = None,
    limit: int = 50,
    offset: int = 0,
) -> OfferList:
    """A page of the matching offers, sorted (GET /v1/offers): as_of sorts newest first unless `order` says."""
    offers = [
        offer
        for offer in catalog.offers
        if (gpu_id is None or offer.gpu == gpu_id)
        and (provider is None or offer.provider == provider)
        and (pricing is None or offer.pricing == pricing)
        and (max_usd_per_gpu_hour is None or offer.usd_per_gpu_hour <= max_usd_per_gpu_hour)
        and (max_age_days is None or offer.age_days(today) <= max_age_days)
    ]
    descending = order == "desc" if order else sort == "as_of"
    offers.sort(key=_OFFER_KEYS[sort], reverse=descending)
    page = offers[offset : offset + limit]
    return OfferList(items=[offer_read(o, today) for o in page], total=len(offers), limit=limit, offset=offset)
