"""Total cost of ownership: buying GPUs (purchase, financing, power, facility, operations, resale) against renting."""

from __future__ import annotations

import math
from datetime import date

import msgspec

from domain.catalog import Catalog, Gpu, Pricing
from domain.narrative import explain, tco_summary
from domain.pricing.costs import PRICE_AGE_WARNING_DAYS, Rental, allowed_offers, can_host, rent
from domain.pricing.tco_inputs import (
    HOURS_PER_YEAR,
    Inputs,
    bought,
    draw_kw,
    fill_inputs,
    reference_system,
    system_purchase_source,
)
from domain.pricing.tco_schema import BuyCost, BuyYear, RentOption, RentYear, TcoRead, TcoRequest, Unavailable
from domain.workloads.requests import Lang
from domain.workloads.results import Assumption, ExchangeRate, GpuSummary

# Billed only for the hours used; reservations bill every hour of the term.
PAY_PER_USE: tuple[Pricing, ...] = ("on_demand", "spot", "capacity_block")
BREAK_EVEN_PRICING: tuple[Pricing, ...] = ("on_demand", "spot")


def owned_monthly_usd(
    catalog: Catalog, gpu: Gpu, gpu_count: int, today: date, lang: Lang
) -> tuple[float, Inputs, list[str]] | None:
    """Monthly cost of owning this many GPUs run around the clock, every default of POST /v1/tco applied, with
    what a buyer should know about the purchase price. None when the catalog has no purchase price for the GPU.
    """
    system = reference_system(catalog, gpu)
    if system is None or system.price is None:
        return None  # what _catalog_purchase refuses, without building its error
    inputs, _, warnings = fill_inputs(
        catalog, TcoRequest(gpu=gpu.id, gpu_count=gpu_count, utilization=1.0), today, lang, explain=False
    )
    return _buy_total_usd(inputs, 1.0) / (inputs.years * 12), inputs, warnings


def _it_power_usd(inputs: Inputs, utilization: float) -> float:
    """IT energy of one year in USD."""
    return draw_kw(inputs, utilization) * HOURS_PER_YEAR * inputs.electricity_usd_per_kwh


def _buy_years_usd(inputs: Inputs, utilization: float) -> list[dict[str, float]]:
    """Each year's cost of owning in USD, by part."""
    power = _it_power_usd(inputs, utilization)
    resale = inputs.resale_fraction * inputs.purchase_usd
    depreciation = (inputs.purchase_usd - resale) / inputs.years
    return [
        {
            "capex": inputs.purchase_usd if year == 1 else 0.0,
            "financing": inputs.cost_of_capital * (inputs.purchase_usd - depreciation * (year - 1)),
            "power": power,
            "facility": (inputs.pue - 1) * power,
            "operations": inputs.operations_usd_per_year,
            "resale": -resale if year == inputs.years else 0.0,
        }
        for year in range(1, inputs.years + 1)
    ]


def _buy_total_usd(inputs: Inputs, utilization: float) -> float:
    return sum(sum(parts.values()) for parts in _buy_years_usd(inputs, utilization))


def _rent_year_usd(rental: Rental, utilization: float) -> float:
    # Whole instances are rented: a 1-GPU need on an 8-GPU offer pays for 8.
    billed = utilization if rental.offer.pricing in PAY_PER_USE else 1.0
    return rental.usd_per_hour * HOURS_PER_YEAR * billed


def _amount(usd: float, factor: float) -> float:
    return round(usd * factor, 2)


def _per_gpu_hour(total: float, inputs: Inputs) -> float:
    return round(total / inputs.used_gpu_hours, 2)


def _buy(inputs: Inputs, factor: float, today: date) -> BuyCost:
    rows = []
    for year, parts in enumerate(_buy_years_usd(inputs, inputs.utilization), start=1):
        money = {name: _amount(value, factor) for name, value in parts.items()}
        rows.append(msgspec.convert({"year": year, **money, "total": round(sum(money.values()), 2)}, BuyYear))
    total = round(sum(row.total for row in rows), 2)
    price = None if inputs.quoted or inputs.system is None else inputs.system.price
    return BuyCost(
        purchase=_amount(inputs.purchase_usd, factor),
        total=total,
        per_gpu_hour=_per_gpu_hour(total, inputs),
        years=rows,
        purchase_as_of=price.as_of if price else None,
        purchase_age_days=max(0, (today - price.as_of).days) if price else None,
        purchase_source=system_purchase_source(inputs.system, inputs.gpu_count)  # type: ignore[arg-type]
        if price
        else "request (purchase_usd): your quote",
    )


def _rent(inputs: Inputs, rental: Rental, factor: float, today: date) -> RentOption:
    offer = rental.offer
    yearly = _amount(_rent_year_usd(rental, inputs.utilization), factor)
    total = round(yearly * inputs.years, 2)
    return RentOption(
        pricing=offer.pricing,
        provider=offer.provider,
        offer_id=offer.id,
        usd_per_gpu_hour=offer.usd_per_gpu_hour,
        gpus_per_instance=offer.gpus_per_instance,
        instances=rental.instances,
        gpus_billed=rental.gpus,
        billed_fraction=inputs.utilization if offer.pricing in PAY_PER_USE else 1.0,
        as_of=offer.as_of,
        age_days=offer.age_days(today),
        source=offer.source,
        total=total,
        per_gpu_hour=_per_gpu_hour(total, inputs),
        years=[RentYear(year=year, rent=yearly, total=yearly) for year in range(1, inputs.years + 1)],
        like_for_like=_like_for_like(inputs, rental),
    )


def _like_for_like(inputs: Inputs, rental: Rental) -> bool:
    """Whether each instance rented holds whole machines of the size bought."""
    return can_host(rental.offer, inputs.shape)


def _cheapest_offers(catalog: Catalog, inputs: Inputs) -> dict[Pricing, Rental | None]:
    """The cheapest rental of the GPUs under each pricing model asked for (None where nobody offers it).

    Like for like: instances of the size of the machine bought (an 8-GPU NVLink server against 8-GPU instances);
    smaller instances only where no offer of that size exists. Instances are rented whole.
    """
    offers = catalog.offers_for_gpu(inputs.gpu.id)
    rentals: dict[Pricing, Rental | None] = {}
    for pricing in inputs.pricing:
        allowed = allowed_offers(offers, [pricing], inputs.providers)
        rentals[pricing] = rent(allowed, inputs.gpu_count, inputs.shape) or rent(allowed, inputs.gpu_count, 1)
    return rentals


def _break_even_utilization(inputs: Inputs, rental: Rental) -> float | None:
    """Owning is affine in utilization (power), pay-per-use rent linear: where the two lines cross, if at most 1."""
    fixed = _buy_total_usd(inputs, 0.0)
    variable = _buy_total_usd(inputs, 1.0) - fixed
    rent_at_full = _rent_year_usd(rental, 1.0) * inputs.years
    if rent_at_full <= variable:
        return None
    crossing = fixed / (rent_at_full - variable)
    return round(crossing, 3) if crossing <= 1 else None


def _break_even_month(inputs: Inputs, rental: Rental) -> int | None:
    """First month whose cumulative owning cost (purchase up front, then running costs) is below cumulative rent."""
    first_year = _buy_years_usd(inputs, inputs.utilization)[0]
    running = (first_year["power"] + first_year["facility"] + first_year["operations"]) / 12
    monthly_rent = _rent_year_usd(rental, inputs.utilization) / 12
    if monthly_rent <= running:
        return None
    month = math.floor(inputs.purchase_usd / (monthly_rent - running)) + 1
    return month if month <= 12 * inputs.years else None


def _break_even(
    inputs: Inputs, rentals: dict[Pricing, Rental | None]
) -> tuple[Rental | None, float | None, int | None]:
    """The pay-per-use rental owning is measured against (on demand, else spot) and where owning catches up."""
    basis = next((r for pricing in BREAK_EVEN_PRICING if (r := rentals.get(pricing)) is not None), None)
    if basis is None:
        return None, None, None
    return basis, _break_even_utilization(inputs, basis), _break_even_month(inputs, basis)


def _offer_warnings(catalog: Catalog, inputs: Inputs, options: list[RentOption], lang: Lang) -> list[str]:
    warnings = [
        explain.say(
            "tco_offer_age",
            lang,
            provider=explain.provider_name(catalog, option.provider),
            pricing=explain.pricing_name(option.pricing, lang),
            days=option.age_days,
            as_of=option.as_of.isoformat(),
        )
        for option in options
        if option.age_days > PRICE_AGE_WARNING_DAYS
    ]
    warnings += [
        explain.say(
            "tco_shape_fallback",
            lang,
            gpu=inputs.gpu.name,
            pricing=explain.pricing_name(option.pricing, lang),
            size=inputs.shape,
            bought=bought(inputs),
            instances=option.instances,
            rented=option.gpus_per_instance,
        )
        for option in options
        if not option.like_for_like
    ]
    if inputs.years < 3 and any(option.pricing == "reserved_3y" for option in options):
        warnings.append(explain.say("tco_reserved_3y_longer", lang, years=inputs.years))
    return warnings


def tco(catalog: Catalog, request: TcoRequest, *, today: date, lang: Lang, rate: ExchangeRate) -> TcoRead:
    """Compare buying a GPU configuration with renting it under each allowed pricing model."""
    inputs, assumptions, warnings = fill_inputs(catalog, request, today, lang)
    factor = rate.usd_to_cny if request.currency == "CNY" else 1.0
    buy = _buy(inputs, factor, today)
    rentals = _cheapest_offers(catalog, inputs)
    options = sorted(
        (_rent(inputs, rental, factor, today) for rental in rentals.values() if rental is not None),
        key=lambda option: (option.total, inputs.pricing.index(option.pricing)),
    )
    not_available = [
        Unavailable(pricing=pricing, reason=_unavailable_reason(catalog, inputs, pricing, lang))
        for pricing, rental in rentals.items()
        if rental is None
    ]
    basis, break_even_utilization, break_even_month = _break_even(inputs, rentals)
    if basis is not None:
        assumptions.append(
            Assumption(
                name="break_even_rent",
                value=explain.say(
                    "t_break_even_rent",
                    lang,
                    pricing=explain.pricing_name(basis.offer.pricing, lang),
                    provider=explain.provider_name(catalog, basis.offer.provider),
                    price=basis.offer.usd_per_gpu_hour,
                    instances=basis.instances,
                    gpus=basis.offer.gpus_per_instance,
                ),
                source=basis.offer.source,
            )
        )
    best = options[0] if options else None
    summary = tco_summary.tco_summary(
        gpu=inputs.gpu.name,
        gpu_count=inputs.gpu_count,
        years=inputs.years,
        utilization=inputs.utilization,
        buy=buy,
        best=best,
        basis=basis.offer if basis else None,
        break_even_utilization=break_even_utilization,
        break_even_month=break_even_month,
        currency=request.currency,
        lang=lang,
        catalog=catalog,
    )
    if best is not None and best.age_days > PRICE_AGE_WARNING_DAYS:
        # The summary is what a chatbot relays: an old rent is said there, not only among the warnings.
        summary += (" " if lang == "en" else "") + explain.say(
            "tco_offer_age",
            lang,
            provider=explain.provider_name(catalog, best.provider),
            pricing=explain.pricing_name(best.pricing, lang),
            days=best.age_days,
            as_of=best.as_of.isoformat(),
        )
    return TcoRead(
        gpu=GpuSummary(id=inputs.gpu.id, name=inputs.gpu.name, vendor=inputs.gpu.vendor),
        system=inputs.system.id if inputs.system else None,
        gpu_count=inputs.gpu_count,
        years=inputs.years,
        utilization=inputs.utilization,
        currency=request.currency,
        exchange_rate=rate if request.currency == "CNY" else None,
        lang=lang,
        buy=buy,
        rent=options,
        not_available=not_available,
        cheaper=None if best is None else "rent" if best.total < buy.total else "buy",
        rent_vs_buy_pct=round((best.total / buy.total - 1) * 100, 1) if best and buy.total > 0 else None,
        break_even_utilization=break_even_utilization,
        break_even_month=break_even_month,
        summary=summary,
        assumptions=assumptions,
        warnings=warnings + _offer_warnings(catalog, inputs, options, lang),
    )


def _unavailable_reason(catalog: Catalog, inputs: Inputs, pricing: Pricing, lang: Lang) -> str:
    separator = "、" if lang == "zh" else ", "
    providers = separator.join(explain.provider_name(catalog, p) for p in inputs.providers) if inputs.providers else ""
    return explain.say(
        "tco_no_offer" if not providers else "tco_no_offer_from",
        lang,
        gpu=inputs.gpu.name,
        pricing=explain.pricing_name(pricing, lang),
        providers=providers,
    )
