"""Rental offers, their writes, bulk imports and price history."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Literal

import msgspec

from api.schemas.base import Page, Wire
from domain.catalog import Pricing, Tier

TIER_DESCRIPTION = (
    "Which of a provider's two clouds sells it, where it sells both at different prices: `community` (hosts run by "
    "third parties, e.g. RunPod Community Cloud) or `secure` (the provider's own data centres); null where the "
    "provider has one tier. Part of what makes two offers the same thing to rent."
)
TierField = Annotated[Tier | None, msgspec.Meta(description=TIER_DESCRIPTION)]


class OfferRead(Wire):
    """A rentable configuration at a dated, sourced price."""

    id: str
    provider: str
    gpu: str
    gpus_per_instance: int
    pricing: Pricing
    usd_per_gpu_hour: float
    usd_per_instance_hour: float
    instance: str | None
    vcpus: int | None
    ram_gb: float | None
    bare_metal: bool | None
    region: str | None
    tier: TierField
    as_of: date
    age_days: int
    source: str
    notes: str


class OfferWrite(Wire, kw_only=True, forbid_unknown_fields=True):
    """An offer as an administrator sends it: the representation GET /v1/offers returns."""

    # Read-only fields (`id`, `usd_per_instance_hour`, `age_days`) are accepted and ignored.

    id: str | None = None
    provider: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    gpu: Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
    gpus_per_instance: Annotated[int, msgspec.Meta(ge=1, le=1024)] = 1
    pricing: Pricing
    # A hundredth of a cent per GPU-hour is below any real price and survives storage without rounding to 0.
    usd_per_gpu_hour: Annotated[float, msgspec.Meta(ge=0.0001, le=10_000)]
    usd_per_instance_hour: float | None = None
    instance: Annotated[str, msgspec.Meta(max_length=120)] | None = None
    vcpus: Annotated[int, msgspec.Meta(ge=1, le=100_000)] | None = None
    ram_gb: Annotated[float, msgspec.Meta(gt=0, le=1_000_000)] | None = None
    bare_metal: bool | None = None
    region: Annotated[str, msgspec.Meta(max_length=120)] | None = None
    tier: TierField = None
    as_of: date
    age_days: int | None = None
    source: Annotated[str, msgspec.Meta(min_length=1, max_length=2000)]
    notes: Annotated[str, msgspec.Meta(max_length=4000)] = ""


class OfferBulkRead(Wire):
    """What a bulk import changed."""

    created: list[str]
    updated: list[str]
    unchanged: list[str]
    catalog_version: str


class OfferHistoryRead(Wire):
    """One change of an offer."""

    offer_id: str
    change: Literal["created", "updated", "deleted", "gone", "superseded"]
    actor: str
    usd_per_gpu_hour: float | None
    previous_usd_per_gpu_hour: float | None
    pricing: str
    as_of: date
    source: str
    recorded_at: datetime
    tier: TierField = None
    superseded_by: Annotated[
        str | None,
        msgspec.Meta(
            description="For a `superseded` change: the id of the price-feed offer of the same provider, GPU, "
            "pricing model, tier and instance size that replaced this curated offer; null otherwise."
        ),
    ] = None


class OfferHistoryList(Wire):
    """An offer's changes, newest first."""

    items: list[OfferHistoryRead]
    total: int


class OfferList(Page):
    """A page of offers."""

    items: list[OfferRead]
