"""Wire objects for one catalog snapshot, built once per version so a read only filters, sorts and encodes."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Literal

import msgspec

from api.schemas import (
    GpuRead,
    GpuRef,
    LowestPricesRead,
    ModelRead,
    OfferRead,
    PriceRead,
    ProviderRead,
    SupportsRead,
    SystemRead,
)
from domain.catalog import Catalog, Gpu, Offer

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
        as_of=offer.as_of,
        age_days=offer.age_days(today),
        source=offer.source,
        notes=offer.notes,
    )


class CatalogView:
    """The published form of a catalog snapshot, with the snapshot it came from."""

    __slots__ = ("catalog", "gpus", "loaded_at", "models", "providers", "source", "systems", "version")

    def __init__(self, catalog: Catalog, *, source: CatalogSource, loaded_at: datetime) -> None:
        self.catalog = catalog
        self.version = catalog.version
        self.source: CatalogSource = source
        self.loaded_at = loaded_at
        self.gpus: dict[str, GpuRead] = {gpu.id: gpu_read(gpu, catalog) for gpu in catalog.gpus}
        self.systems: dict[str, SystemRead] = {}
        for system in catalog.systems:
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
        self.models: dict[str, ModelRead] = {model.id: _wire(model, ModelRead) for model in catalog.models}
