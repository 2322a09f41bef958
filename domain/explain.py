"""Sentences a person or a chatbot can say, in English and Chinese."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from functools import cache
from typing import Protocol

from domain.catalog import Catalog, Offer, Pricing
from domain.compare import GpuRatios
from domain.estimates import Exclusion, Lang, Option, Parallelism
from domain.messages import MESSAGES
from domain.workloads import USE_CASE_TARGETS, InferenceWorkload


class _Owned(Protocol):
    """What a TCO summary reads of the cost of owning (domain.tco_schema.BuyCost)."""

    @property
    def total(self) -> float: ...
    @property
    def per_gpu_hour(self) -> float: ...


class _Rented(_Owned, Protocol):
    """What a TCO summary reads of a rental (domain.tco_schema.RentOption)."""

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


_TARGETS = {
    "en": {
        "max_ttft_ms": "time to first token",
        "max_tpot_ms": "time per output token",
        "requests_per_second": "requests per second",
        "concurrency": "concurrency",
        "images_per_hour": "images per hour",
        "target_days": "target days",
        "target_hours": "target hours",
    },
    "zh": {
        "max_ttft_ms": "首 token 延迟",
        "max_tpot_ms": "每 token 延迟",
        "requests_per_second": "每秒请求数",
        "concurrency": "并发数",
        "images_per_hour": "每小时出图数",
        "target_days": "目标天数",
        "target_hours": "目标小时数",
    },
}


_USD_FIELD = re.compile(r"\{(\w+):usd\}")
_DURATION_FIELD = re.compile(r"\{(\w+):duration\}")


@cache
def _template(code: str, lang: Lang) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """A message as str.format takes it, and the names of its fields written `{name:usd}` and `{name:duration}`."""
    # `usd` fields are amounts in USD as `money` writes them; `duration` fields are hours as `duration` writes them.
    text = MESSAGES[code][lang]
    plain = _DURATION_FIELD.sub(r"{\1}", _USD_FIELD.sub(r"{\1}", text))
    return plain, tuple(_USD_FIELD.findall(text)), tuple(_DURATION_FIELD.findall(text))


def say(code: str, lang: Lang, **figures: object) -> str:
    """The sentence for a message code in a language."""
    text, amounts, durations = _template(code, lang)
    for name in amounts:
        value = figures[name]
        assert isinstance(value, int | float), (code, name)
        figures[name] = money(float(value), "USD")
    for name in durations:
        value = figures[name]
        assert isinstance(value, int | float), (code, name)
        figures[name] = duration(float(value), lang)
    return text.format(**figures)


def duration(hours: float, lang: Lang) -> str:
    """Hours as people read them: whole hours from 10 h, tenths below, minutes under an hour, seconds under one."""
    units = {"en": (" h", " min", " s"), "zh": (" 小时", " 分钟", " 秒")}[lang]
    # The unit is chosen on the rounded figure, so 59.7 minutes reads "1.0 h", not "60 min".
    if round(hours, 1) >= 10:
        return f"{hours:,.0f}{units[0]}"
    if round(hours, 1) >= 1:
        return f"{hours:.1f}{units[0]}"
    if round(hours * 60) >= 1:
        return f"{hours * 60:.0f}{units[1]}"
    seconds = hours * 3600
    return f"{seconds:.1f}{units[2]}" if round(seconds, 1) < 10 else f"{seconds:.0f}{units[2]}"


def provider_name(catalog: Catalog | None, provider_id: str) -> str:
    """A provider as people write it ("CoreWeave", not "coreweave"); the id when the catalog does not know it."""
    provider = catalog.provider(provider_id) if catalog is not None else None
    return provider.name if provider else provider_id


_USE_CASES: dict[Lang, dict[str, str]] = {
    "en": {"chat": "chat", "agent": "agent", "batch": "batch"},
    "zh": {"chat": "chat（对话）", "agent": "agent（智能体）", "batch": "batch（批处理）"},
}
_LATENCY: dict[Lang, dict[str, str]] = {
    "en": {
        "tpot": "TPOT <= {value:,.0f} ms",
        "ttft": "TTFT <= {value:,.0f} ms",
        "none": "{use_case}: throughput only, no latency targets",
        "some": "{use_case}: {targets}",
        "defaults": " (the defaults of {use_case}; max_tpot_ms/max_ttft_ms override them)",
        "separator": ", ",
        "summary": " Targets: {targets}.",
    },
    "zh": {
        "tpot": "每 token 延迟（TPOT）≤ {value:,.0f} 毫秒",
        "ttft": "首 token 延迟（TTFT）≤ {value:,.0f} 毫秒",
        "none": "{use_case}：只看吞吐，无延迟目标",
        "some": "{use_case}：{targets}",
        "defaults": "（{use_case} 的默认值，可用 max_tpot_ms/max_ttft_ms 覆盖）",
        "separator": "，",
        "summary": "目标：{targets}。",
    },
}


def latency_targets(use_case: str, tpot_ms: float | None, ttft_ms: float | None, defaults: bool, lang: Lang) -> str:
    """The latency targets a request applies, with its use case, as a clause."""
    text = _LATENCY[lang]
    name = _USE_CASES[lang].get(use_case, use_case)
    parts = [text[key].format(value=value) for key, value in (("tpot", tpot_ms), ("ttft", ttft_ms)) if value]
    if not parts:
        return text["none"].format(use_case=name)
    clause = text["some"].format(use_case=name, targets=text["separator"].join(parts))
    return clause + (text["defaults"].format(use_case=name) if defaults else "")


def request_targets(workload: object, lang: Lang, note: bool = True) -> str | None:
    """The latency targets an inference request applies (None for other kinds)."""
    if not isinstance(workload, InferenceWorkload):
        return None
    tpot, ttft = USE_CASE_TARGETS[workload.use_case]
    defaults = note and (workload.max_tpot_ms, workload.max_ttft_ms) == (tpot, ttft) and tpot is not None
    return latency_targets(workload.use_case, workload.max_tpot_ms, workload.max_ttft_ms, defaults, lang)


def layout_text(
    tensor: int, pipeline: int, expert: int, data: int, attention_data: int | None, lang: Lang, sep: str = " · "
) -> str:
    """A layout as engines name it: TP, PP, EP and DP (model copies), and data-parallel attention where used."""
    text = sep.join((f"TP{tensor}", f"PP{pipeline}", f"EP{expert}", f"DP{data}"))
    if attention_data:
        text += sep + (f"注意力 DP{attention_data}" if lang == "zh" else f"attention DP{attention_data}")
    return text


def parallelism_text(parallelism: Parallelism, lang: Lang, sep: str = " · ") -> str:
    """An option's layout as `layout_text` writes it."""
    p = parallelism
    return layout_text(p.tensor, p.pipeline, p.expert, p.data, p.attention_data, lang, sep)


def target_names(targets: list[str], lang: Lang) -> str:
    """Names of missed targets in the answer language."""
    return ", ".join(_TARGETS[lang].get(t, t) for t in targets)


# What each assumption is, for tables (the answers carry the key in `name`).
_ASSUMPTION_NAMES: dict[str, tuple[str, str]] = {
    "weights": ("weights", "权重"),
    "kv_cache": ("KV cache", "KV 缓存"),
    "gpu_memory_utilization": ("usable GPU memory", "可用显存"),
    "sequence": ("sequence", "序列"),
    "batch": ("batch", "批大小"),
    "decode_mbu": ("decode memory-bandwidth utilization", "解码显存带宽利用率"),
    "prefill_mfu": ("prefill compute utilization", "预填充算力利用率"),
    "step_floor_us_per_layer": ("step floor per layer (µs)", "每层单步下限（微秒）"),
    "tensor_parallel": ("tensor parallelism", "张量并行"),
    "weight_only_decode": ("weight-only quantized decode", "仅权重量化解码"),
    "inter_node_bandwidth": ("bandwidth between nodes", "节点间带宽"),
    "compute": ("compute", "计算量"),
    "train_mfu": ("training compute utilization", "训练算力利用率"),
    "sharding": ("sharding", "切分方式"),
    "optimizer_states": ("optimizer states", "优化器状态"),
    "image_tflop": ("compute per image", "每张图计算量"),
    "diffusion_mfu": ("diffusion compute utilization", "扩散模型算力利用率"),
    "system": ("server", "整机"),
    "gpu": ("GPU", "GPU"),
    "gpu_count": ("GPU count", "GPU 数量"),
    "purchase_usd": ("purchase price (USD)", "购置价（美元）"),
    "years": ("years", "年数"),
    "utilization": ("utilization", "利用率"),
    "electricity_usd_per_kwh": ("electricity (USD per kWh)", "电价（美元/千瓦时）"),
    "pue": ("PUE", "PUE"),
    "operations_usd_per_year": ("operations (USD per year)", "运维（美元/年）"),
    "resale_fraction": ("resale value", "残值比例"),
    "cost_of_capital": ("cost of capital", "资金成本"),
    "pricing": ("pricing models", "计价方式"),
    "providers": ("providers", "供应商"),
    "power_kw_per_gpu": ("power per GPU (kW)", "每卡功率（千瓦）"),
    "idle_draw": ("idle draw", "空闲功耗"),
    "energy": ("energy", "能耗"),
    "financing": ("financing", "资金成本计算"),
    "rent_billing": ("rental billing", "租用计费"),
    "rent_offer": ("rental offer", "租用报价"),
    "break_even_rent": ("break-even against", "盈亏平衡对比"),
    "break_even_month": ("break-even month", "回本月份"),
    "engine": ("serving engine", "推理引擎"),
    "latency_definitions": ("latency definitions", "延迟定义"),
    "use_case": ("use case and latency targets", "使用场景与延迟目标"),
    "fp8_decode_share_of_byte_saving": (
        "FP8 decode: share of the byte saving realized",
        "FP8 解码实际获得的带宽节省比例",
    ),
    "mla_decode_extra_us": (
        "MLA decode: the engine's extra latency per layer (µs)",
        "MLA 解码：推理引擎每层额外延迟（微秒）",
    ),
    "fp8_gemm_latency_us": (
        "FP8 decode: fixed latency per weight GEMM (µs)",
        "FP8 解码：每个权重 GEMM 的固定延迟（微秒）",
    ),
    "w4_moe_decode_latency": (
        "4-bit MoE decode: latency per MoE layer and expert, expert bytes rate",
        "4 位 MoE 解码：每个 MoE 层与每个专家的延迟、专家权重读取速率",
    ),
    "expert_all_to_all_us": ("expert all-to-all per MoE layer (µs)", "每个 MoE 层专家全交换（微秒）"),
}


def assumption_name(name: str, lang: Lang) -> str:
    """An assumption's key as a table shows it; the key itself when it has no name yet."""
    names = _ASSUMPTION_NAMES.get(name)
    return (names[1] if lang == "zh" else names[0]) if names else name.replace("_", " ")


def money(value: float, currency: str) -> str:
    """An amount with its currency sign; cents below 1,000."""
    sign = "-" if value < 0 else ""
    symbol = "$" if currency == "USD" else "¥"
    amount = abs(value)
    return f"{sign}{symbol}{amount:,.2f}" if amount < 1000 else f"{sign}{symbol}{amount:,.0f}"


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


_PRICING_NAMES: dict[Lang, dict[Pricing, str]] = {
    "en": {
        "on_demand": "on demand",
        "reserved_1y": "1-year reserved",
        "reserved_3y": "3-year reserved",
        "spot": "spot",
        "capacity_block": "capacity block",
    },
    "zh": {
        "on_demand": "按需",
        "reserved_1y": "1 年预留",
        "reserved_3y": "3 年预留",
        "spot": "竞价",
        "capacity_block": "容量块",
    },
}


def pricing_name(pricing: Pricing, lang: Lang) -> str:
    """A pricing model as a person says it."""
    return _PRICING_NAMES[lang][pricing]


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


def percent(share: float) -> str:
    """A share as a percentage with three significant digits."""
    return f"{share * 100:.3g}%"


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
