"""What POST /v1/tco takes and answers: the request with its bounds, and the yearly costs of buying and renting."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal

import msgspec

from domain.catalog import Pricing
from domain.workloads.requests import Currency, GpuName, Lang, ProviderIds, WorkloadSpec
from domain.workloads.results import Assumption, ExchangeRate, GpuSummary, Result

GpuCount = Annotated[
    int, msgspec.Meta(ge=1, le=4096, description="GPUs bought or rented. Default: the system's, else 8.")
]
Years = Annotated[int, msgspec.Meta(ge=1, le=6, description="Years compared. Default 3.")]
Utilization = Annotated[
    float, msgspec.Meta(ge=0.001, le=1, description="Share of the hours the GPUs work, 0.001-1. Default 0.6.")
]
UsdPerKwh = Annotated[float, msgspec.Meta(gt=0, le=2, description="Electricity, USD per kWh, > 0. Default 0.10.")]
Pue = Annotated[float, msgspec.Meta(ge=1.0, le=3.0, description="Power usage effectiveness. Default 1.4.")]
UsdPerYear = Annotated[
    float,
    msgspec.Meta(ge=0, le=1e10, description="Support, staff, colocation, USD a year, >= 0. Default 10% of purchase."),
]
PurchaseUsd = Annotated[
    float,
    msgspec.Meta(gt=0, le=1e11, description="USD for all gpu_count GPUs with their servers, > 0. Default: catalog."),
]
ResaleFraction = Annotated[
    float, msgspec.Meta(ge=0, le=0.9, description="Resale value / purchase, 0-0.9. Default 0.2.")
]
AnnualRate = Annotated[
    float, msgspec.Meta(ge=0, le=0.5, description="Cost of capital, annual rate 0-0.5. Default 0.08.")
]
PricingList = Annotated[
    list[Pricing], msgspec.Meta(min_length=1, max_length=5, description="Default: on_demand, reserved_1y/3y, spot.")
]


class TcoRequest(WorkloadSpec, kw_only=True, frozen=True):
    """Buying against renting one GPU configuration; every omitted figure gets a stated default."""

    gpu: GpuName | None = None
    system: GpuName | None = None
    gpu_count: GpuCount | None = None
    years: Years | None = None
    utilization: Utilization | None = None
    electricity_usd_per_kwh: UsdPerKwh | None = None
    pue: Pue | None = None
    operations_usd_per_year: UsdPerYear | None = None
    purchase_usd: PurchaseUsd | None = None
    resale_fraction: ResaleFraction | None = None
    cost_of_capital: AnnualRate | None = None
    pricing: PricingList | None = None
    providers: ProviderIds | None = None
    currency: Currency = "USD"
    lang: Lang | None = None


class BuyYear(Result, kw_only=True, frozen=True):
    """One year of owning; resale is negative (money back) in the last year."""

    year: int
    capex: float
    financing: float
    power: float
    facility: float
    operations: float
    resale: float
    total: float


class BuyCost(Result, kw_only=True, frozen=True):
    """Owning over the period; per_gpu_hour is per GPU-hour actually used."""

    purchase: float
    total: float
    per_gpu_hour: float
    years: list[BuyYear]
    purchase_as_of: Annotated[
        date | None, msgspec.Meta(description="Date of the catalog purchase price; null for the request's own quote.")
    ] = None
    purchase_age_days: Annotated[
        int | None, msgspec.Meta(description="Days since purchase_as_of; null for the request's own quote.")
    ] = None
    purchase_source: Annotated[
        str,
        msgspec.Meta(description="Where the purchase price comes from: the catalog server price, or the request."),
    ] = ""


class RentYear(Result, kw_only=True, frozen=True):
    """One year of renting."""

    year: int
    rent: float
    total: float


class RentOption(Result, kw_only=True, frozen=True):
    """Renting with the cheapest offer of one pricing model; usd_per_gpu_hour is the offer's price in USD."""

    pricing: Pricing
    provider: str
    offer_id: str
    usd_per_gpu_hour: float
    gpus_per_instance: int
    instances: int
    gpus_billed: int
    billed_fraction: float
    as_of: date
    age_days: int
    source: str
    total: float
    per_gpu_hour: float
    years: list[RentYear]
    like_for_like: Annotated[
        bool,
        msgspec.Meta(
            description="Whether the instances rented have as many GPUs as the server bought (an 8-GPU NVLink "
            "server against 8-GPU instances); false when no offer of that size exists (the warnings say so)."
        ),
    ] = True


class Unavailable(Result, kw_only=True, frozen=True):
    """A pricing model asked for with no matching offer."""

    pricing: Pricing
    reason: str


class TcoRead(Result, kw_only=True, frozen=True):
    """Buying against renting: yearly costs, totals, break-even points, the cheaper choice and every assumption."""

    gpu: GpuSummary
    system: str | None
    gpu_count: int
    years: int
    utilization: float
    currency: Currency
    exchange_rate: ExchangeRate | None
    lang: Lang
    buy: BuyCost
    rent: list[RentOption]
    not_available: list[Unavailable]
    cheaper: Literal["buy", "rent"] | None
    rent_vs_buy_pct: float | None
    break_even_utilization: float | None
    break_even_month: int | None
    summary: str
    assumptions: list[Assumption]
    warnings: list[str]
