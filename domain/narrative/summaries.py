"""Summaries in English and Chinese: a recommendation, an estimate, a TCO comparison, GPU comparisons, offers."""

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
from domain.workloads.results import Exclusion, GpuRatios, Option


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


# One template set per language; the logic that fills them is shared.
_COMPARISON = {
    "en": {
        "row": "{name} has {memory} the memory, {bandwidth} the bandwidth and {bf16} the dense BF16 compute",
        "price": " at {price} the on-demand price",
        "no_price": " (no on-demand price to compare)",
        "rows": "Compared with {base}: {rows}. ",
        "alone": "{base}. ",
        "separator": "; ",
        "largest": "Most memory: {name} ({memory:g} GB).",
        "cheapest": " Cheapest on demand: {name} at {price}/GPU-hour ({provider}, {as_of}).",
    },
    "zh": {
        "row": "{name}：显存 {memory}，带宽 {bandwidth}，BF16 稠密算力 {bf16}",
        "price": "，按需价格 {price}",
        "no_price": "（无可比的按需价格）",
        "rows": "以 {base} 为基准：{rows}。",
        "alone": "{base}。",
        "separator": "；",
        "largest": "显存最大：{name}（{memory:g} GB）。",
        "cheapest": "按需最便宜：{name}，每 GPU 小时 {price}（{provider}，{as_of}）。",
    },
}


def _times(value: float | None) -> str:
    return f"{value:.2f}x" if value is not None else "n/a"


def comparison_summary(catalog: Catalog, rows: list[GpuRatios], lang: Lang) -> str:
    """Two or three sentences: how each GPU compares with the first, most memory, cheapest on demand."""
    text = _COMPARISON[lang]
    base = rows[0].gpu
    parts = [
        text["row"].format(
            name=r.gpu.name,
            memory=_times(r.memory_gb),
            bandwidth=_times(r.memory_bandwidth_gbps),
            bf16=_times(r.bf16_tflops),
        )
        + (
            text["price"].format(price=_times(r.usd_per_gpu_hour))
            if r.usd_per_gpu_hour is not None
            else text["no_price"]
        )
        for r in rows[1:]
    ]
    summary = (
        text["rows"].format(base=base.name, rows=text["separator"].join(parts))
        if parts
        else text["alone"].format(base=base.name)
    )
    largest = max(rows, key=lambda r: (r.gpu.memory_gb, r.gpu.id)).gpu
    summary += text["largest"].format(name=largest.name, memory=largest.memory_gb)
    priced = [(r.on_demand, r.gpu) for r in rows if r.on_demand is not None]
    if priced:
        offer, gpu = min(priced, key=lambda pair: (pair[0].usd_per_gpu_hour, pair[1].id))
        summary += text["cheapest"].format(
            name=gpu.name,
            price=money(offer.usd_per_gpu_hour, "USD"),
            provider=provider_name(catalog, offer.provider),
            as_of=offer.as_of.isoformat(),
        )
    return summary


def _performance_text(kind: str, option: Option, lang: Lang) -> str:
    performance = option.performance
    if performance is None:
        return ""
    if kind == "inference" and performance.tokens_per_second:
        tps = performance.tokens_per_second.expected
        concurrency = int(performance.concurrency.expected) if performance.concurrency else 0
        tpot = performance.tpot_ms.expected if performance.tpot_ms else 0
        if lang == "zh":
            return f"约 {tps:,.0f} 输出 token/秒（{concurrency} 并发，每 token {tpot:.0f} 毫秒）"
        return f"~{tps:,.0f} output tokens/s at {concurrency} concurrent sequences ({tpot:.0f} ms per token)"
    if performance.run_hours:
        hours = performance.run_hours.expected
        if lang == "zh":
            return f"约 {hours:,.0f} 小时（{hours / 24:.1f} 天）完成"
        return f"about {hours:,.0f} hours ({hours / 24:.1f} days) for the run"
    if performance.images_per_hour:
        images = performance.images_per_hour.expected
        return f"约每小时 {images:,.0f} 张图" if lang == "zh" else f"~{images:,.0f} images per hour"
    return ""


def _unit_cost_text(option: Option, lang: Lang) -> str:
    cost = option.cost
    if cost is None:
        return ""
    for name, en, zh in (
        ("per_million_tokens", "per million output tokens", "每百万输出 token"),
        ("per_run", "for the run", "整次训练"),
        ("per_1000_images", "per 1,000 images", "每千张图"),
    ):
        value = getattr(cost, name)
        if value is not None:
            amount = money(value, cost.currency)
            return f"{zh} {amount}" if lang == "zh" else f"{amount} {en}"
    return ""


def _configuration(option: Option, lang: Lang, catalog: Catalog | None = None) -> str:
    gpu, count, cost, offer = option.gpu, option.gpu_count, option.cost, option.offer
    text = f"{count} 张 {gpu.name}" if lang == "zh" else f"{count}x {gpu.name}"
    if offer is not None and cost is not None:
        hourly = money(cost.hourly, cost.currency)
        provider = provider_name(catalog, offer.provider)
        text += f"（{provider}，每小时 {hourly}）" if lang == "zh" else f" on {provider} at {hourly}/hour"
    return text


def recommendation_summary(
    kind: str, options: list[Option], excluded: list[Exclusion], lang: Lang, catalog: Catalog | None = None
) -> str:
    """Two or three sentences a chatbot can say about a recommendation (providers named from `catalog`)."""
    text = _SUMMARY[lang]
    if not options:
        return text["none"].format(reasons="; ".join(f"{e.gpu}: {e.reason}" for e in excluded[:3]))
    best = options[0]
    parts = [p for p in (_performance_text(kind, best, lang), _unit_cost_text(best, lang)) if p]
    summary = text["best"].format(
        configuration=_configuration(best, lang, catalog), parts=text["separator"].join(parts)
    )
    if not best.meets_targets:
        summary += text["missed"]
    if len(options) > 1:
        summary += text["runner_up"].format(configuration=_configuration(options[1], lang, catalog))
    if excluded:
        summary += text["excluded"].format(count=len(excluded))
    return summary


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


def estimate_summary(kind: str, option: Option, lang: Lang, catalog: Catalog | None = None) -> str:
    """One or two sentences about a single configuration; one that cannot run it says what can."""
    text = _ESTIMATE[lang]
    if not option.feasible:
        # Every reason: why not, then the smallest configuration that runs it (and, from the planner, the
        # precisions that fit on fewer GPUs).
        reasons = ("" if lang == "zh" else " ").join(option.reasons)
        return text["no_fit"].format(configuration=_configuration(option, lang, catalog), reasons=reasons)
    parts = [p for p in (_performance_text(kind, option, lang), _unit_cost_text(option, lang)) if p]
    return text["fits"].format(
        configuration=_configuration(option, lang, catalog), parts=_SUMMARY[lang]["separator"].join(parts)
    )


def offers_summary(catalog: Catalog, count: int, cheapest: Offer | None, lang: Lang) -> str:
    """A sentence about the offers found, naming the cheapest per GPU-hour."""
    if cheapest is None:
        return _OFFERS[lang]["none"]
    gpu = catalog.gpu(cheapest.gpu)
    return _OFFERS[lang]["some"].format(
        count=count,
        gpu=gpu.name if gpu else cheapest.gpu,
        pricing=pricing_name(cheapest.pricing, lang),
        provider=provider_name(catalog, cheapest.provider),
        price=money(cheapest.usd_per_gpu_hour, "USD"),
        as_of=cheapest.as_of.isoformat(),
    )


_SUMMARY: dict[Lang, dict[str, str]] = {
    "en": {
        "none": "No GPU in the catalog can run this workload under the constraints. For example, {reasons}",
        "best": "Best option: {configuration}, {parts}.",
        "missed": " No configuration meets every target.",
        "runner_up": " Runner-up: {configuration}.",
        "excluded": " {count} GPUs were left out; the exclusions list says why.",
        "separator": ", ",
    },
    "zh": {
        "none": "在当前约束下，目录中没有 GPU 能运行该负载。例如 {reasons}",
        "best": "首选：{configuration}，{parts}。",
        "missed": "注意：没有配置能满足全部目标。",
        "runner_up": "次选：{configuration}。",
        "excluded": "另有 {count} 种 GPU 被排除（原因见排除列表）。",
        "separator": "，",
    },
}

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

_ESTIMATE: dict[Lang, dict[str, str]] = {
    "en": {"fits": "{configuration}: {parts}.", "no_fit": "{configuration} cannot run it: {reasons}"},
    "zh": {"fits": "{configuration}：{parts}。", "no_fit": "{configuration} 无法运行该负载：{reasons}"},
}

_OFFERS: dict[Lang, dict[str, str]] = {
    "en": {
        "none": "No offer in the catalog matches.",
        "some": "{count} offers match. Cheapest: {gpu} {pricing} on {provider} at {price} per GPU-hour "
        "(price as of {as_of}).",
    },
    "zh": {
        "none": "目录中没有符合条件的报价。",
        "some": "共 {count} 条报价。最便宜：{provider} 的 {gpu}（{pricing}），"
        "每 GPU 小时 {price}（价格日期 {as_of}）。",
    },
}
