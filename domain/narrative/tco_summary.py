"""The summary of a TCO comparison, rent against buy, in English and Chinese."""

from __future__ import annotations

from typing import Protocol

from domain.catalog import Catalog, Offer, Pricing
from domain.narrative.explain import (
    money,
    percent,
    pricing_name,
    provider_name,
)
from domain.workloads.requests import Lang


class _Owned(Protocol):
    """What a TCO summary reads of the cost of owning (domain.pricing.tco_schema.BuyCost)."""

    @property
    def total(self) -> float: ...
    @property
    def per_gpu_hour(self) -> float: ...


class _Rented(_Owned, Protocol):
    """What a TCO summary reads of a rental (domain.pricing.tco_schema.RentOption)."""

    @property
    def pricing(self) -> Pricing: ...
    @property
    def provider(self) -> str: ...


_TCO_SUMMARY: dict[Lang, dict[str, str]] = {
    "en": {
        "buy": "Buying is cheaper: {count}x {gpu} for {period} at {utilization} utilization cost {buy} to "
        "own ({buy_hour} per GPU-hour used) against {rent} renting {pricing} from {provider} ({rent_hour}).",
        "rent": "Renting is cheaper: {count}x {gpu} for {period} at {utilization} utilization cost {rent} "
        "renting {pricing} from {provider} ({rent_hour} per GPU-hour used) against {buy} to own ({buy_hour}).",
        "alone": "Owning {count}x {gpu} for {period} at {utilization} utilization costs {buy} ({buy_hour} "
        "per GPU-hour used); no rental offer matches the request, so there is nothing to compare with.",
        "break_even": " Owning pays off above {break_even} utilization against {pricing} from {provider}",
        "month": "; at {utilization} it costs less than renting from month {month} on",
        "end": ".",
        "never": " Renting {pricing} from {provider} stays cheaper even at full utilization.",
    },
    "zh": {
        "buy": "自购更划算：{count} 张 {gpu} 使用 {period}、利用率 {utilization}，自购总成本 {buy}"
        "（每使用 GPU 小时 {buy_hour}），{provider} {pricing}租用为 {rent}（{rent_hour}）。",
        "rent": "租用更划算：{count} 张 {gpu} 使用 {period}、利用率 {utilization}，{provider} {pricing}租用"
        "总成本 {rent}（每使用 GPU 小时 {rent_hour}），自购为 {buy}（{buy_hour}）。",
        "alone": "{count} 张 {gpu} 使用 {period}、利用率 {utilization}，自购总成本 {buy}（每使用 GPU 小时 "
        "{buy_hour}）；没有符合条件的租用报价，无法比较。",
        "break_even": "与 {provider} {pricing}租用相比，利用率高于 {break_even} 时自购更省",
        "month": "；按 {utilization} 利用率，自购从第 {month} 个月起累计成本低于租用",
        "end": "。",
        "never": "即使利用率达到 100%，{provider} {pricing}租用仍更便宜。",
    },
}


def tco_summary(
    *,
    gpu: str,
    gpu_count: int,
    years: int,
    utilization: float,
    buy: _Owned,
    best: _Rented | None,
    basis: Offer | None,
    break_even_utilization: float | None,
    break_even_month: int | None,
    currency: str,
    lang: Lang,
    catalog: Catalog | None = None,
) -> str:
    """Two or three sentences: which is cheaper and by how much, and the utilization at which owning pays off."""
    text = _TCO_SUMMARY[lang]
    period = f"{years} 年" if lang == "zh" else f"{years} year" + ("s" if years > 1 else "")
    figures = {"count": gpu_count, "gpu": gpu, "period": period, "utilization": percent(utilization)}
    own = {"buy": money(buy.total, currency), "buy_hour": money(buy.per_gpu_hour, currency)}
    if best is None:
        return text["alone"].format(**figures, **own)
    summary = text["rent" if best.total < buy.total else "buy"].format(
        **figures,
        **own,
        rent=money(best.total, currency),
        rent_hour=money(best.per_gpu_hour, currency),
        pricing=pricing_name(best.pricing, lang),
        provider=provider_name(catalog, best.provider),
    )
    if basis is None:
        return summary
    named = {"pricing": pricing_name(basis.pricing, lang), "provider": provider_name(catalog, basis.provider)}
    if break_even_utilization is None:
        return summary + text["never"].format(**named)
    summary += text["break_even"].format(**named, break_even=percent(break_even_utilization))
    if break_even_month is not None:
        summary += text["month"].format(utilization=percent(utilization), month=break_even_month)
    return summary + text["end"]
