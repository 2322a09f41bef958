"""Summaries in English and Chinese: a recommendation, an estimate, a TCO comparison, GPU comparisons, offers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from domain.catalog import Catalog, Offer
from domain.narrative.explain import (
    _LATENCY,
    _TARGETS,
    money,
    parallelism_text,
    pricing_name,
    provider_name,
    say,
    target_names,
)
from domain.workloads.requests import Lang
from domain.workloads.results import Exclusion, GpuRatios, Option

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
        ttft = performance.ttft_ms.expected if performance.ttft_ms else 0
        per_user = 1000 / tpot if tpot else 0
        if lang == "zh":
            return (
                f"约 {tps:,.0f} 输出 token/秒（{concurrency} 并发，每 token {tpot:.0f} 毫秒，即每用户 "
                f"{per_user:.1f} token/秒，首 token {ttft:,.0f} 毫秒）"
            )
        return (
            f"~{tps:,.0f} output tokens/s at {concurrency} concurrent sequences ({tpot:.0f} ms per token, "
            f"{per_user:.1f} tokens/s per user; first token in {ttft:,.0f} ms)"
        )
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
    if count > 1 and option.feasible:
        text += (
            f"（{parallelism_text(option.parallelism, lang)}）"
            if lang == "zh"
            else (f" ({parallelism_text(option.parallelism, lang)})")
        )
    if offer is not None and cost is not None:
        hourly = money(cost.hourly, cost.currency)
        provider = provider_name(catalog, offer.provider)
        text += f"（{provider}，每小时 {hourly}）" if lang == "zh" else f" on {provider} at {hourly}/hour"
    return text


@dataclass(frozen=True)
class OutOfReach:
    """A latency target no configuration meets, and the best figure one reaches: its GPU, count and hourly cost."""

    target: str
    limit: float
    value: float
    gpu: str
    gpus: int
    hourly: float | None
    currency: str


_REACH: dict[Lang, dict[str, str]] = {
    "en": {
        "reach": " {what} within {limit:,.0f} ms is out of reach: the fastest configuration reaches {value:,.0f} ms "
        "({gpus}x {gpu}{cost}).",
        "cost": " at {hourly}/hour",
    },
    "zh": {
        "reach": "{what}无法达到 {limit:,.0f} 毫秒以内：最快的配置为 {value:,.0f} 毫秒（{gpus} 张 {gpu}{cost}）。",
        "cost": "，每小时 {hourly}",
    },
}


def out_of_reach_text(reach: list[OutOfReach], lang: Lang) -> str:
    """Which latency targets no configuration meets, and the best figure any reaches."""
    text = _REACH[lang]
    parts = []
    for item in reach:
        cost = text["cost"].format(hourly=money(item.hourly, item.currency)) if item.hourly is not None else ""
        what = _TARGETS[lang].get(item.target, item.target)
        if lang == "en":
            what = what[0].upper() + what[1:]
        parts.append(
            text["reach"].format(what=what, limit=item.limit, value=item.value, gpus=item.gpus, gpu=item.gpu, cost=cost)
        )
    return "".join(parts)


_SUMMARY: dict[Lang, dict[str, str]] = {
    "en": {
        "none": "No GPU in the catalog can run this workload under the constraints.{reach} For example, {reasons}",
        "best": "Best option: {configuration}, {parts}.",
        "missed": " No configuration meets every target.",
        "runner_up": " Runner-up: {configuration}.",
        "excluded": " {count} GPUs were left out; the exclusions list says why.",
        "stale": " It is priced with a {days}-day-old offer (as of {as_of}); check the price before you commit.",
        "separator": ", ",
    },
    "zh": {
        "none": "在当前约束下，目录中没有 GPU 能运行该负载。{reach}例如 {reasons}",
        "best": "首选：{configuration}，{parts}。",
        "missed": "注意：没有配置能满足全部目标。",
        "runner_up": "次选：{configuration}。",
        "excluded": "另有 {count} 种 GPU 被排除（原因见排除列表）。",
        "stale": "该价格来自 {days} 天前的报价（日期 {as_of}），下单前请核实。",
        "separator": "，",
    },
}


def stale_sentence(option: Option, lang: Lang) -> str:
    """The sentence saying an option is priced with an old offer; empty when its price is current."""
    if option.offer is None or option.cost is None or not option.cost.stale_price:
        return ""
    return _SUMMARY[lang]["stale"].format(days=option.offer.age_days, as_of=option.offer.as_of.isoformat())


def recommendation_summary(
    kind: str,
    options: list[Option],
    excluded: list[Exclusion],
    lang: Lang,
    catalog: Catalog | None = None,
    targets: str | None = None,
    reach: list[OutOfReach] | None = None,
) -> str:
    """Two or three sentences a chatbot can say about a recommendation (providers named from `catalog`)."""
    text = _SUMMARY[lang]
    reach_text = out_of_reach_text(reach or [], lang)
    if not options:
        # `excluded` comes with the exclusions closest to an option first.
        separator = "；" if lang == "zh" else "; "
        reasons = separator.join(f"{e.gpu}: {e.reason.rstrip('.。')}" for e in excluded[:3])
        return text["none"].format(reach=reach_text, reasons=reasons + ("。" if lang == "zh" else "."))
    best = options[0]
    parts = [p for p in (_performance_text(kind, best, lang), _unit_cost_text(best, lang)) if p]
    summary = text["best"].format(
        configuration=_configuration(best, lang, catalog), parts=text["separator"].join(parts)
    )
    if targets:
        summary += _LATENCY[lang]["summary"].format(targets=targets)
    if not best.meets_targets:
        unmet = set(best.unmet_targets)
        summary += (
            reach_text if reach_text and unmet <= {r.target for r in reach or []} else text["missed"] + reach_text
        )
    summary += stale_sentence(best, lang)
    if len(options) > 1:
        summary += text["runner_up"].format(configuration=_configuration(options[1], lang, catalog))
    if excluded:
        summary += text["excluded"].format(count=len(excluded))
    return summary


_ESTIMATE: dict[Lang, dict[str, str]] = {
    "en": {"fits": "{configuration}: {parts}.", "no_fit": "{configuration} cannot run it: {reasons}"},
    "zh": {"fits": "{configuration}：{parts}。", "no_fit": "{configuration} 无法运行该负载：{reasons}"},
}


def estimate_summary(kind: str, option: Option, lang: Lang, catalog: Catalog | None = None) -> str:
    """One or two sentences about a single configuration; one that cannot run it says what can."""
    text = _ESTIMATE[lang]
    if not option.feasible:
        # Every reason: why not, then the smallest configuration that runs it (and, from the planner, the
        # precisions that fit on fewer GPUs).
        reasons = ("" if lang == "zh" else " ").join(option.reasons)
        return text["no_fit"].format(configuration=_configuration(option, lang, catalog), reasons=reasons)
    parts = [p for p in (_performance_text(kind, option, lang), _unit_cost_text(option, lang)) if p]
    summary = text["fits"].format(
        configuration=_configuration(option, lang, catalog), parts=_SUMMARY[lang]["separator"].join(parts)
    )
    if option.unmet_targets:
        summary += (" " if lang == "en" else "") + say("misses", lang, targets=target_names(option.unmet_targets, lang))
    return summary + stale_sentence(option, lang)


_OFFERS: dict[Lang, dict[str, str]] = {
    "en": {
        "none": "No offer in the catalog matches.",
        "some": "{count} offers match. Cheapest: {gpu} {pricing} on {provider} at {price} per GPU-hour "
        "(price as of {as_of}).",
        "old": " That price is {days} days old; check it before you commit.",
    },
    "zh": {
        "none": "目录中没有符合条件的报价。",
        "some": "共 {count} 条报价。最便宜：{provider} 的 {gpu}（{pricing}），"
        "每 GPU 小时 {price}（价格日期 {as_of}）。",
        "old": "该价格已有 {days} 天，下单前请核实。",
    },
}


def offers_summary(
    catalog: Catalog,
    count: int,
    cheapest: Offer | None,
    lang: Lang,
    today: date | None = None,
    max_age_days: int | None = None,
) -> str:
    """A sentence about the offers found, naming the cheapest per GPU-hour (and saying so when its price is old)."""
    if cheapest is None:
        return _OFFERS[lang]["none"]
    gpu = catalog.gpu(cheapest.gpu)
    old = ""
    if today is not None and max_age_days is not None and (days := cheapest.age_days(today)) > max_age_days:
        old = _OFFERS[lang]["old"].format(days=days)
    return (
        _OFFERS[lang]["some"].format(
            count=count,
            gpu=gpu.name if gpu else cheapest.gpu,
            pricing=pricing_name(cheapest.pricing, lang),
            provider=provider_name(catalog, cheapest.provider),
            price=money(cheapest.usd_per_gpu_hour, "USD"),
            as_of=cheapest.as_of.isoformat(),
        )
        + old
    )
