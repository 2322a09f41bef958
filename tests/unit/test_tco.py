"""Total cost of ownership: buying against renting, hand-computed rows, break-even points, the seed's rule of thumb."""

from __future__ import annotations

from datetime import date
from typing import Any

import msgspec
import pytest

from domain.catalog import Catalog, Offer
from domain.pricing.tco import tco
from domain.pricing.tco_inputs import HOURS_PER_YEAR
from domain.pricing.tco_schema import RentOption, TcoRead, TcoRequest
from domain.workloads.requests import Lang
from domain.workloads.resolve import WorkloadError
from domain.workloads.results import ExchangeRate
from tests.conftest import with_offers

TODAY = date(2026, 11, 29)
RATE = ExchangeRate(usd_to_cny=7.10, as_of=TODAY, source="test rate")
# Seed 002's comparison: one 8x H100 server over 3 years against DigitalOcean on demand.
SEED_CASE = {"gpu": "h100-sxm", "gpu_count": 8, "years": 3, "providers": ["digitalocean"], "pricing": ["on_demand"]}
SMALL_CASE = {
    "gpu": "h100-sxm",
    "gpu_count": 1,
    "years": 2,
    "utilization": 0.5,
    "purchase_usd": 10_000,
    "electricity_usd_per_kwh": 0.2,
    "pue": 1.2,
    "operations_usd_per_year": 1_000,
    "resale_fraction": 0.2,
    "cost_of_capital": 0.1,
    "pricing": ["on_demand"],
    "providers": ["digitalocean"],
}


@pytest.fixture(scope="module")
def priced(reference: Catalog) -> Catalog:
    """The catalog with DigitalOcean's H100 Droplets at 3.39 (1 GPU) and 23.92 (8 GPUs) an hour, the rows' prices."""
    kept = [o for o in reference.offers if not (o.provider == "digitalocean" and o.gpu == "h100-sxm")]
    fixed = {"provider": "digitalocean", "gpu": "h100-sxm", "pricing": "on_demand", "as_of": TODAY, "source": "test"}
    droplets = [
        Offer(id="digitalocean-h100-sxm-on-demand", usd_per_gpu_hour=3.39, **fixed),
        Offer(id="digitalocean-h100-sxm-on-demand-x8", gpus_per_instance=8, usd_per_gpu_hour=2.99, **fixed),
    ]
    return with_offers(reference, [*kept, *droplets])


def run(catalog: Catalog, lang: Lang = "en", **body: Any) -> TcoRead:
    return tco(catalog, msgspec.convert(body, TcoRequest), today=TODAY, lang=lang, rate=RATE)


def only_rent(result: TcoRead) -> RentOption:
    assert len(result.rent) == 1, result.rent
    return result.rent[0]


def assumption(result: TcoRead, name: str) -> tuple[str, str]:
    found = next(a for a in result.assumptions if a.name == name)
    return found.value, found.source


def test_hand_computed_buy_rows(priced: Catalog) -> None:
    result = run(priced, **SMALL_CASE)
    # DGX H100: 10.2 kW / 8 = 1.275 kW per GPU; at 50% it draws 1.275 x (0.3 + 0.7 x 0.5) = 0.82875 kW.
    power = 0.82875 * 8760 * 0.2  # 1,451.97 USD of IT energy a year
    facility = 0.2 * power  # PUE 1.2
    first, second = result.buy.years
    assert (first.year, first.capex, first.financing, first.resale) == (1, 10_000, 1_000, 0)
    assert (second.year, second.capex, second.resale) == (2, 0, -2_000)
    assert second.financing == 600  # 10% of the book value 6,000 (10,000 falling linearly to 2,000)
    for row in (first, second):
        assert row.power == pytest.approx(power, abs=0.01) == 1451.97
        assert row.facility == pytest.approx(facility, abs=0.01)
        assert row.operations == 1_000
    assert first.total == pytest.approx(10_000 + 1_000 + power + facility + 1_000, abs=0.01)
    assert second.total == pytest.approx(600 + power + facility + 1_000 - 2_000, abs=0.01)
    assert result.buy.purchase == 10_000 and result.buy.total == pytest.approx(15_084.72, abs=0.01)


def test_hand_computed_rent_rows_and_per_gpu_hour(priced: Catalog) -> None:
    result = run(priced, **SMALL_CASE)
    option = only_rent(result)
    # Instances are rented whole: one GPU is DigitalOcean's single-GPU droplet at 3.39, not a slice of its 8x node
    # at 2.99 per GPU (that would bill 8 x 2.99 = 23.92 an hour).
    assert (option.offer_id, option.usd_per_gpu_hour, option.gpus_billed, option.billed_fraction) == (
        "digitalocean-h100-sxm-on-demand",
        3.39,
        1,
        0.5,
    )
    assert [(y.year, y.rent) for y in option.years] == [(1, 14_848.2), (2, 14_848.2)]  # 3.39 x 8760 x 0.5
    used_hours = 1 * HOURS_PER_YEAR * 2 * 0.5
    assert option.per_gpu_hour == 3.39
    assert result.buy.per_gpu_hour == round(result.buy.total / used_hours, 2) == 1.72
    # Owning: 1,237.35 rent a month against 228.53 running costs; 10,000 / (1,237.35 - 228.53) = 9.9 -> month 10.
    assert result.cheaper == "buy" and result.break_even_month == 10


@pytest.mark.parametrize(
    "body",
    [SMALL_CASE, {"gpu": "h100-sxm"}, {"system": "dgx-h200", "years": 5, "currency": "CNY"}, {"gpu": "mi300x"}],
)
def test_totals_are_the_sum_of_the_rows(reference: Catalog, body: dict[str, Any]) -> None:
    result = run(reference, **body)
    for row in result.buy.years:
        parts = (row.capex, row.financing, row.power, row.facility, row.operations, row.resale)
        assert row.total == pytest.approx(sum(parts), abs=0.005)
    assert result.buy.total == pytest.approx(sum(row.total for row in result.buy.years), abs=0.005)
    assert len(result.buy.years) == result.years
    for option in result.rent:
        assert option.total == pytest.approx(sum(row.total for row in option.years), abs=0.005)
        used_hours = result.gpu_count * HOURS_PER_YEAR * result.years * result.utilization
        assert option.per_gpu_hour == pytest.approx(option.total / used_hours, abs=0.005)
    assert [o.total for o in result.rent] == sorted(o.total for o in result.rent)


def test_seed_rule_of_thumb_high_utilization_owning_wins(priced: Catalog) -> None:
    result = run(priced, **SEED_CASE, utilization=0.9)
    rent = only_rent(result)
    assert rent.total > result.buy.total and result.cheaper == "buy"
    # Seed 002: renting for 3 years typically costs 30-50% more than owning; here 565,756 against 379,421 USD.
    assert result.rent_vs_buy_pct == pytest.approx((rent.total / result.buy.total - 1) * 100, abs=0.1)
    assert 30 <= result.rent_vs_buy_pct <= 50
    assert result.break_even_month is not None and result.break_even_month <= 36
    assert "Buying is cheaper" in result.summary and "month 22" in result.summary


def test_seed_rule_of_thumb_low_utilization_renting_wins(priced: Catalog) -> None:
    result = run(priced, **SEED_CASE, utilization=0.15)
    assert only_rent(result).total < result.buy.total and result.cheaper == "rent"
    assert result.rent_vs_buy_pct is not None and result.rent_vs_buy_pct < 0
    assert result.break_even_month is None  # at 15% owning never catches up within 3 years
    assert result.break_even_utilization is not None and 0.15 < result.break_even_utilization < 0.9


def test_at_the_break_even_utilization_both_cost_the_same(priced: Catalog) -> None:
    break_even = run(priced, **SEED_CASE, utilization=0.9).break_even_utilization
    assert break_even is not None
    result = run(priced, **SEED_CASE, utilization=break_even)
    assert only_rent(result).total == pytest.approx(result.buy.total, rel=0.002)
    # Owning costs 13,208.3 fixed + 3,752.8 x u over 2 years; renting 59,392.8 x u: they meet at u = 0.237.
    assert run(priced, **SMALL_CASE).break_even_utilization == pytest.approx(0.237, abs=0.001)


def test_no_break_even_when_renting_stays_cheaper_at_full_utilization(reference: Catalog) -> None:
    # A 1M USD server costs more than three years of RunPod's 2.69 per GPU-hour for 8 GPUs at full use (565k).
    result = run(reference, **SEED_CASE | {"providers": None, "purchase_usd": 1_000_000}, utilization=1.0)
    assert result.break_even_utilization is None and result.cheaper == "rent"
    assert "stays cheaper even at full utilization" in result.summary


def test_reserved_rent_does_not_depend_on_utilization(reference: Catalog) -> None:
    # A fixed 1-year reservation of 8x H100 at 1.85 per GPU-hour, the only reserved H100 row, so the shipped prices
    # can change without changing this test.
    eight = next(o for o in reference.offers_for_gpu("h100-sxm") if o.gpus_per_instance == 8)
    reserved = msgspec.structs.replace(eight, id="test-h100-reserved-1y", pricing="reserved_1y", usd_per_gpu_hour=1.85)
    others = [o for o in reference.offers if not (o.gpu == "h100-sxm" and o.pricing == "reserved_1y")]
    catalog = with_offers(reference, [*others, reserved])
    low, high = (run(catalog, gpu="h100-sxm", pricing=["reserved_1y"], utilization=u) for u in (0.2, 0.9))
    assert only_rent(low).offer_id == "test-h100-reserved-1y"
    assert only_rent(low).total == only_rent(high).total == pytest.approx(8 * 1.85 * 8760 * 3, abs=0.01)
    assert only_rent(low).billed_fraction == 1.0
    assert only_rent(low).per_gpu_hour > only_rent(high).per_gpu_hour  # the idle hours are paid for
    assert low.buy.total < high.buy.total  # owning pays for the power drawn


def test_defaults_are_stated_with_their_sources(reference: Catalog) -> None:
    result = run(reference, gpu="h100-sxm", utilization=0.7)
    assert assumption(result, "utilization") == ("0.7", "request")
    assert assumption(result, "gpu_count")[0] == "8"
    assert assumption(result, "years")[0] == "3 years"
    value, source = assumption(result, "electricity_usd_per_kwh")
    assert value == "0.1 USD/kWh" and "prices.md" in source
    value, source = assumption(result, "pue")
    assert value == "1.4" and "prices.md" in source
    value, source = assumption(result, "purchase_usd")
    assert value == "270,000 USD" and "DGX H100" in source and "SemiAnalysis" in source
    value, source = assumption(result, "operations_usd_per_year")
    assert value == "27,000 USD" and "10% of the purchase price" in source
    assert assumption(result, "resale_fraction")[0].startswith("0.2")
    assert assumption(result, "cost_of_capital")[0].startswith("0.08")
    assert assumption(result, "pricing")[0] == "on_demand, reserved_1y, reserved_3y, spot"
    value, source = assumption(result, "power_kw_per_gpu")
    assert value.startswith("1.275 kW") and "10.2 kW" in source
    assert all(a.source for a in result.assumptions)


def test_system_sets_the_count_and_scales_its_price(reference: Catalog) -> None:
    whole = run(reference, system="DGX H100")
    assert (whole.system, whole.gpu.id, whole.gpu_count, whole.buy.purchase) == ("dgx-h100", "h100-sxm", 8, 270_000)
    assert assumption(whole, "system") == ("dgx-h100", "request")
    half = run(reference, system="dgx-h100", gpu_count=4)
    assert half.buy.purchase == 135_000 and assumption(half, "gpu_count")[1] == "request"


def test_accelerator_only_and_low_confidence_prices_are_warned(reference: Catalog) -> None:
    result = run(reference, gpu="mi300x")
    assert result.system == "mi300x-platform" and result.buy.purchase == 100_000
    warnings = " ".join(result.warnings)
    assert "accelerators only" in warnings and "low-confidence" in warnings
    value, source = assumption(result, "power_kw_per_gpu")
    assert value.startswith("1.325 kW") and "750 W + 575 W host share" in source  # no whole-system power figure
    kit = run(reference, system="hls-gaudi2")
    assert any("accelerators only" in w for w in kit.warnings)
    assert not any("accelerators only" in w for w in run(reference, system="dgx-h100").warnings)


def test_unknown_names_answer_with_suggestions(reference: Catalog) -> None:
    with pytest.raises(WorkloadError) as gpu:
        run(reference, gpu="h100x")
    assert gpu.value.field == "gpu" and "h100-sxm" in gpu.value.suggestions
    with pytest.raises(WorkloadError) as system:
        run(reference, system="dgx-h10")
    assert system.value.field == "system" and "dgx-h100" in system.value.suggestions
    with pytest.raises(WorkloadError) as provider:
        run(reference, gpu="h100-sxm", providers=["nowhere"])
    assert provider.value.field == "providers"


@pytest.mark.parametrize("body", [{}, {"gpu": "h100-sxm", "system": "dgx-h100"}])
def test_exactly_one_of_gpu_or_system(reference: Catalog, body: dict[str, Any]) -> None:
    with pytest.raises(WorkloadError, match="either gpu"):
        run(reference, **body)


def test_gpu_without_a_purchase_price_needs_one(reference: Catalog) -> None:
    with pytest.raises(WorkloadError) as error:
        run(reference, gpu="l40s")
    assert error.value.field == "purchase_usd" and "pass purchase_usd" in error.value.message
    result = run(reference, gpu="l40s", purchase_usd=80_000)
    assert result.system is None and result.buy.purchase == 80_000
    assert assumption(result, "purchase_usd") == ("80,000 USD", "request")
    assert assumption(result, "power_kw_per_gpu")[0].startswith("0.925 kW")  # 350 W TDP + 575 W host share
    assert result.rent and result.cheaper in ("buy", "rent")


def test_cny_converts_money_with_the_rate(reference: Catalog) -> None:
    usd = run(reference, gpu="h100-sxm")
    cny = run(reference, gpu="h100-sxm", currency="CNY")
    assert usd.exchange_rate is None and cny.exchange_rate == RATE and cny.currency == "CNY"
    assert cny.buy.purchase == pytest.approx(usd.buy.purchase * 7.10, abs=0.01)
    assert cny.buy.total == pytest.approx(usd.buy.total * 7.10, abs=0.1)
    assert cny.rent[0].total == pytest.approx(usd.rent[0].total * 7.10, abs=0.1)
    assert cny.rent[0].usd_per_gpu_hour == usd.rent[0].usd_per_gpu_hour  # the offer's own USD price
    assert "¥" in cny.summary and cny.break_even_utilization == usd.break_even_utilization


def test_pricing_without_offers_is_listed_as_not_available(reference: Catalog) -> None:
    result = run(reference, gpu="gaudi3", pricing=["spot", "spot"])
    assert result.rent == [] and result.cheaper is None and result.rent_vs_buy_pct is None
    assert [(u.pricing, u.reason) for u in result.not_available] == [
        ("spot", "No spot offer for Intel Gaudi 3 (OAM HL-325L).")
    ]
    assert result.break_even_utilization is None and "nothing to compare" in result.summary


def test_three_year_reservation_over_a_shorter_period_is_warned(reference: Catalog) -> None:
    catalog_with_reservation = with_offers(
        reference,
        [
            *reference.offers,
            msgspec.structs.replace(
                reference.offers_for_gpu("h100-sxm")[0], id="test-h100-reserved-3y", pricing="reserved_3y"
            ),
        ],
    )
    result = run(catalog_with_reservation, gpu="h100-sxm", years=2, pricing=["reserved_3y"])
    assert only_rent(result).pricing == "reserved_3y"
    assert any("3-year reservation" in w for w in result.warnings)


def test_chinese_summary_and_warnings(priced: Catalog) -> None:
    result = run(priced, lang="zh", **SEED_CASE, utilization=0.9)
    assert result.lang == "zh" and result.summary.startswith("自购更划算")
    assert "第 22 个月" in result.summary and all(w and "price" not in w for w in result.warnings)
