"""What a TCO comparison assumes: defaults, the hardware and its purchase price, power, each figure with its source."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import TypeVar

from domain.catalog import Catalog, Gpu, Pricing, System
from domain.narrative import explain
from domain.narrative.explain import pricing_name as _pricing_name
from domain.narrative.explain import say as _say
from domain.pricing.costs import HOURS_PER_MONTH
from domain.pricing.tco_schema import TcoRequest
from domain.workloads.requests import Lang
from domain.workloads.resolve import WorkloadError, check_providers, unknown_name
from domain.workloads.results import Assumption

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
    return gpu, reference_system(catalog, gpu)


def reference_system(catalog: Catalog, gpu: Gpu) -> System | None:
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


def system_purchase_source(system: System, gpu_count: int) -> str:
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


def fill_inputs(
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
        purchase_source = system_purchase_source(system, gpu_count)
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
    average_kw = draw_kw(inputs, inputs.utilization) / inputs.gpu_count
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
            value=explain.say("t_offer", lang, shape=inputs.shape, bought=bought(inputs)),
            source="catalog offers",
        ),
        Assumption(
            name="break_even_month",
            value=explain.say("t_break_even_month", lang),
            source="gpu-advisor model",
        ),
    ]


def bought(inputs: Inputs) -> str:
    """What is bought, as a sentence names it."""
    if inputs.system is not None and inputs.shape == inputs.system.gpu_count:
        return inputs.system.name
    return f"{inputs.shape}-GPU server"


def draw_kw(inputs: Inputs, utilization: float) -> float:
    return inputs.kw_per_gpu * inputs.gpu_count * (IDLE_DRAW + (1 - IDLE_DRAW) * utilization)
