"""Total cost of ownership: buying GPUs (purchase, financing, power, facility, operations, resale) against renting."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import TypeVar

import msgspec

from domain import explain
from domain.catalog import Catalog, Gpu, Pricing, System
from domain.estimates import Assumption, ExchangeRate, GpuSummary, Lang
from domain.explain import pricing_name as _pricing_name
from domain.explain import say as _say
from domain.pricing import HOURS_PER_MONTH, PRICE_AGE_WARNING_DAYS, Rental, allowed_offers, can_host, rent
from domain.tco_schema import BuyCost, BuyYear, RentOption, RentYear, TcoRead, TcoRequest, Unavailable
from domain.workloads import WorkloadError, check_providers, unknown_name

T = TypeVar("T")

HOURS_PER_YEAR = 12 * HOURS_PER_MONTH
DEFAULT_GPU_COUNT = 8
DEFAULT_YEARS = 3
DEFAULT_UTILIZATION = 0.6
DEFAULT_ELECTRICITY = 0.10
DEFAULT_PUE = 1.4
OPERATIONS_SHARE = 0.10
DEFAULT_RESALE_FRACTION = 0.2
DEFAULT_COST_OF_CAPITAL = 0.08
DEFAULT_PRICING: tuple[Pricing, ...] = ("on_demand", "reserved_1y", "reserved_3y", "spot")
# Seed 000: ~1,275 W per GPU in H100/H200/MI300X servers = 700 W TDP + this share of CPUs, memory, fans, NICs.
HOST_SHARE_KW = 0.575
IDLE_DRAW = 0.3
# Billed only for the hours used; reservations bill every hour of the term.
PAY_PER_USE: tuple[Pricing, ...] = ("on_demand", "spot", "capacity_block")
BREAK_EVEN_PRICING: tuple[Pricing, ...] = ("on_demand", "spot")
PURCHASE_AGE_WARNING_DAYS = 365
_ACCELERATORS_ONLY = re.compile(r"\bgpus only\b|\bkit\b|excluding the (?:server|rest)", re.IGNORECASE)

SOURCES = {
    "gpu_count": "gpu-advisor default: one 8-GPU server",
    "years": "gpu-advisor default: a typical 3-year depreciation period (seed 002 compares 3 years)",
    "utilization": "gpu-advisor assumption",
    "electricity_usd_per_kwh": "prices.md: industrial electricity ~0.08-0.15 USD/kWh",
    "pue": "prices.md: typical air-cooled PUE ~1.4-1.5; liquid-cooled <= 1.2 (seed 002)",
    "operations_usd_per_year": "gpu-advisor assumption: 10% of the purchase price a year for support contracts, "
    "staff and colocation space",
    "resale_fraction": "gpu-advisor assumption: resale value after the period",
    "cost_of_capital": "gpu-advisor assumption: annual rate on the capital tied up in the hardware",
    "pricing": "gpu-advisor default: every pricing model except capacity blocks",
    "providers": "gpu-advisor default: every provider in the catalog",
}


@dataclass(frozen=True)
class Inputs:
    """Every figure of the comparison in USD, defaults filled."""

    gpu: Gpu
    system: System | None
    gpu_count: int
    years: int
    utilization: float
    electricity_usd_per_kwh: float
    pue: float
    operations_usd_per_year: float
    purchase_usd: float
    resale_fraction: float
    cost_of_capital: float
    kw_per_gpu: float
    pricing: tuple[Pricing, ...]
    providers: tuple[str, ...] | None
    quoted: bool = False  # the request gave its own purchase price

    @property
    def used_gpu_hours(self) -> float:
        return self.gpu_count * HOURS_PER_YEAR * self.years * self.utilization

    @property
    def shape(self) -> int:
        """GPUs per machine bought: the server's (a server's GPUs share its NVLink), at most the GPUs bought."""
        per_machine = self.system.gpu_count if self.system is not None else DEFAULT_GPU_COUNT
        return min(per_machine, self.gpu_count)


def _figure(
    notes: list[Assumption] | None,
    name: str,
    given: T | None,
    default: T,
    shown: Callable[[T], str],
    source: str | None = None,
) -> T:
    """The given value, else the default; either way recorded with where it came from (unless notes is None)."""
    value = given if given is not None else default
    if notes is not None:
        notes.append(
            Assumption(
                name=name, value=shown(value), source="request" if given is not None else source or SOURCES[name]
            )
        )
    return value


def _hardware(catalog: Catalog, request: TcoRequest) -> tuple[Gpu, System | None]:
    if (request.gpu is None) == (request.system is None):
        raise WorkloadError("gpu", "give either gpu (a GPU id or alias) or system (a server id or alias), not both")
    if request.system is not None:
        system = catalog.system(request.system)
        if system is None:
            raise unknown_name(catalog, "system", request.system, "system")
        gpu = catalog.gpu(system.gpu)
        assert gpu is not None  # the catalog refuses systems with unknown GPUs
        return gpu, system
    assert request.gpu is not None
    gpu = catalog.gpu(request.gpu)
    if gpu is None:
        raise unknown_name(catalog, "gpu", request.gpu, "gpu")
    return gpu, _reference_system(catalog, gpu)


def _reference_system(catalog: Catalog, gpu: Gpu) -> System | None:
    """The server of this GPU with the lowest purchase price per GPU; an unpriced one only if none is priced."""
    systems = catalog.systems_for_gpu(gpu.id)

    def preference(system: System) -> tuple[bool, bool, float, str]:
        # A dated list, street or quote price for a whole server beats an estimate or a low-confidence figure.
        price = system.price
        if price is None:
            return (True, True, 0.0, system.id)
        weak = price.basis == "estimate" or price.confidence == "low"
        return (False, weak, price.usd / system.gpu_count, system.id)

    return min(systems, key=preference, default=None)


def _catalog_purchase(
    gpu: Gpu, system: System | None, gpu_count: int, today: date, lang: Lang
) -> tuple[float, list[str]]:
    """The catalog server price scaled to gpu_count, and what a buyer should know about it."""
    if system is None or system.price is None:
        raise WorkloadError(
            "purchase_usd",
            f"the catalog has no purchase price for {gpu.name} (no priced server holds it); pass purchase_usd",
        )
    price = system.price
    per_gpu = price.usd / system.gpu_count
    warnings = []
    if price.confidence == "low" or price.basis == "estimate":
        warnings.append(explain.say("tco_price_low_confidence", lang, system=system.name, source=price.source))
    if _accelerators_only(price.source, system.notes):
        warnings.append(explain.say("tco_price_accelerators_only", lang, system=system.name))
    days = (today - price.as_of).days
    if days > PURCHASE_AGE_WARNING_DAYS:
        warnings.append(explain.say("tco_purchase_age", lang, days=days, as_of=price.as_of.isoformat()))
    return per_gpu * gpu_count, warnings


def _purchase_source(system: System, gpu_count: int) -> str:
    """Where the catalog purchase price of `_catalog_purchase` comes from."""
    price = system.price
    assert price is not None
    per_gpu = price.usd / system.gpu_count
    return (
        f"catalog: {system.name} {price.basis} price {price.usd:,.0f} USD for {system.gpu_count} GPUs "
        f"({per_gpu:,.0f} per GPU) x {gpu_count}; {price.source}, as of {price.as_of.isoformat()}"
    )


@functools.lru_cache(maxsize=1024)
def _accelerators_only(source: str, notes: str) -> bool:
    """Whether a price's source or its system's notes say it covers the accelerators alone.

    Cached by the two texts: the search takes tens of microseconds and every inference option asks it again.
    """
    return _ACCELERATORS_ONLY.search(f"{source} {notes}") is not None


def _power(gpu: Gpu, system: System | None) -> float:
    """kW per GPU at full load: the system's power per GPU, else the GPU's TDP plus a share of the host."""
    if system is not None and system.power_kw is not None:
        return system.power_kw / system.gpu_count
    return gpu.tdp_w / 1000 + HOST_SHARE_KW


def _power_source(gpu: Gpu, system: System | None) -> str:
    """Where `_power` comes from."""
    if system is not None and system.power_kw is not None:
        return f"{system.name}: {system.power_kw:g} kW system power / {system.gpu_count} GPUs"
    return (
        f"{gpu.name} TDP {gpu.tdp_w:g} W + {HOST_SHARE_KW * 1000:g} W host share "
        "(seed 000: ~1,275 W per GPU for H100/H200/MI300X servers)"
    )


def _inputs(
    catalog: Catalog, request: TcoRequest, today: date, lang: Lang, *, explain: bool = True
) -> tuple[Inputs, list[Assumption], list[str]]:
    """Resolve the hardware, fill every default and say where each figure comes from (no notes unless explain)."""
    gpu, system = _hardware(catalog, request)
    check_providers(catalog, request.providers, "providers")
    named = system if request.system else None
    notes: list[Assumption] | None = None
    if explain:
        notes = [Assumption(name="system", value=named.id, source="request")] if named else []
        notes.append(Assumption(name="gpu", value=gpu.id, source=f"the GPUs of {named.id}" if named else "request"))
    count = named.gpu_count if named else DEFAULT_GPU_COUNT
    count_source = f"the GPU count of {named.name}" if named else None
    gpu_count = _figure(notes, "gpu_count", request.gpu_count, count, str, count_source)
    catalog_usd, warnings = (
        _catalog_purchase(gpu, system, gpu_count, today, lang) if request.purchase_usd is None else (0.0, [])
    )
    purchase_source = None
    if explain and request.purchase_usd is None:
        assert system is not None  # _catalog_purchase refuses a missing one
        purchase_source = _purchase_source(system, gpu_count)
    usd = "{:,.0f} USD".format
    purchase = _figure(notes, "purchase_usd", request.purchase_usd, catalog_usd, usd, purchase_source)
    years = _figure(notes, "years", request.years, DEFAULT_YEARS, lambda y: _say("t_years", lang, years=y))
    utilization = _figure(notes, "utilization", request.utilization, DEFAULT_UTILIZATION, "{:g}".format)
    electricity = _figure(
        notes, "electricity_usd_per_kwh", request.electricity_usd_per_kwh, DEFAULT_ELECTRICITY, "{:g} USD/kWh".format
    )
    pue = _figure(notes, "pue", request.pue, DEFAULT_PUE, "{:g}".format)
    operations = _figure(
        notes, "operations_usd_per_year", request.operations_usd_per_year, OPERATIONS_SHARE * purchase, usd
    )
    resale = _figure(
        notes,
        "resale_fraction",
        request.resale_fraction,
        DEFAULT_RESALE_FRACTION,
        lambda share: _say("t_resale", lang, share=share),
    )
    capital = _figure(
        notes,
        "cost_of_capital",
        request.cost_of_capital,
        DEFAULT_COST_OF_CAPITAL,
        lambda rate: _say("t_capital", lang, rate=rate),
    )
    separator = "、" if lang == "zh" else ", "
    pricing = _figure(
        notes,
        "pricing",
        request.pricing,
        list(DEFAULT_PRICING),
        # English keeps the API's ids; Chinese names them.
        lambda kinds: separator.join(kind if lang == "en" else _pricing_name(kind, lang) for kind in kinds),
    )
    providers = _figure(
        notes,
        "providers",
        request.providers,
        None,
        lambda p: separator.join(p) if p else _say("t_all", lang),
    )
    kw_per_gpu = _power(gpu, system)
    inputs = Inputs(
        gpu=gpu,
        system=system,
        gpu_count=gpu_count,
        years=years,
        utilization=utilization,
        electricity_usd_per_kwh=electricity,
        pue=pue,
        operations_usd_per_year=operations,
        purchase_usd=purchase,
        resale_fraction=resale,
        cost_of_capital=capital,
        kw_per_gpu=kw_per_gpu,
        pricing=tuple(dict.fromkeys(pricing)),
        providers=tuple(providers) if providers else None,
        quoted=request.purchase_usd is not None,
    )
    if notes is None:
        return inputs, [], warnings
    return inputs, notes + _model_assumptions(inputs, _power_source(gpu, system), lang), warnings


def _model_assumptions(inputs: Inputs, power_source: str, lang: Lang) -> list[Assumption]:
    average_kw = _draw_kw(inputs, inputs.utilization) / inputs.gpu_count
    return [
        Assumption(
            name="power_kw_per_gpu",
            value=explain.say(
                "t_power", lang, full=inputs.kw_per_gpu, average=average_kw, utilization=inputs.utilization
            ),
            source=power_source,
        ),
        Assumption(
            name="idle_draw",
            value=explain.say("t_idle", lang, idle=IDLE_DRAW, busy=1 - IDLE_DRAW),
            source="gpu-advisor assumption",
        ),
        Assumption(
            name="energy",
            value=explain.say("t_energy", lang, hours=HOURS_PER_YEAR),
            source="gpu-advisor model",
        ),
        Assumption(
            name="financing",
            value=explain.say("t_financing", lang),
            source="gpu-advisor model",
        ),
        Assumption(
            name="rent_billing",
            value=explain.say("t_billing", lang),
            source="gpu-advisor model",
        ),
        Assumption(
            name="rent_offer",
            value=explain.say("t_offer", lang, shape=inputs.shape, bought=_bought(inputs)),
            source="catalog offers",
        ),
        Assumption(
            name="break_even_month",
            value=explain.say("t_break_even_month", lang),
            source="gpu-advisor model",
        ),
    ]


def _bought(inputs: Inputs) -> str:
    """What is bought, as a sentence names it."""
    if inputs.system is not None and inputs.shape == inputs.system.gpu_count:
        return inputs.system.name
    return f"{inputs.shape}-GPU server"


def owned_monthly_usd(
    catalog: Catalog, gpu: Gpu, gpu_count: int, today: date, lang: Lang
) -> tuple[float, Inputs, list[str]] | None:
    """Monthly cost of owning this many GPUs run around the clock, every default of POST /v1/tco applied, with
    what a buyer should know about the purchase price. None when the catalog has no purchase price for the GPU.
    """
    system = _reference_system(catalog, gpu)
    if system is None or system.price is None:
        return None  # what _catalog_purchase refuses, without building its error
    inputs, _, warnings = _inputs(
        catalog, TcoRequest(gpu=gpu.id, gpu_count=gpu_count, utilization=1.0), today, lang, explain=False
    )
    return _buy_total_usd(inputs, 1.0) / (inputs.years * 12), inputs, warnings


def _draw_kw(inputs: Inputs, utilization: float) -> float:
    return inputs.kw_per_gpu * inputs.gpu_count * (IDLE_DRAW + (1 - IDLE_DRAW) * utilization)


def _it_power_usd(inputs: Inputs, utilization: float) -> float:
    """IT energy of one year in USD."""
    return _draw_kw(inputs, utilization) * HOURS_PER_YEAR * inputs.electricity_usd_per_kwh


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
        purchase_source=_purchase_source(inputs.system, inputs.gpu_count)  # type: ignore[arg-type]
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
            bought=_bought(inputs),
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
    inputs, assumptions, warnings = _inputs(catalog, request, today, lang)
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
    summary = explain.tco_summary(
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
