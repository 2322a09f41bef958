"""Sentences a person or a chatbot can say, in English and Chinese."""

from __future__ import annotations

import re
from functools import cache
from typing import Protocol

from domain.catalog import Catalog, Offer, Pricing
from domain.compare import GpuRatios
from domain.estimates import Exclusion, Lang, Option


class _Owned(Protocol):
    """What a TCO summary reads of the cost of owning (domain.tco.BuyCost)."""

    @property
    def total(self) -> float: ...
    @property
    def per_gpu_hour(self) -> float: ...


class _Rented(_Owned, Protocol):
    """What a TCO summary reads of a rental (domain.tco.RentOption)."""

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


# Reasons, warnings and exclusions: one code, one sentence per language, filled from named figures.
MESSAGES: dict[str, dict[Lang, str]] = {
    # reasons
    "fits_one_gpu": {
        "en": "Fits on one {gpu} with no tensor parallelism ({weights_gb:.0f} GB of weights).",
        "zh": "单卡 {gpu} 即可装下，无需张量并行（权重 {weights_gb:.0f} GB）。",
    },
    "tensor_parallel": {
        "en": "Splits the model over {tp} GPUs (tensor parallel): {weights_gb:.0f} GB of weights exceed one GPU.",
        "zh": "模型需张量并行切分到 {tp} 张卡：权重 {weights_gb:.0f} GB 超出单卡显存。",
    },
    "tensor_parallel_latency": {
        "en": "Splits each copy over {tp} GPUs (tensor parallel) although fewer hold it: faster per request and "
        "more room for the KV cache.",
        "zh": "虽然更少的卡也装得下，每个副本仍切分到 {tp} 张卡（张量并行）：单请求更快，KV 缓存空间更大。",
    },
    "pipeline_nodes": {
        "en": "Spans {nodes} nodes: tensor parallel 8 inside each node, pipeline parallel {pp} across them.",
        "zh": "跨 {nodes} 个节点：节点内 8 卡张量并行，节点间 {pp} 级流水线并行。",
    },
    "replicas": {
        "en": "{replicas} copies of the model serve {concurrency} sequences at once.",
        "zh": "{replicas} 个模型副本同时服务 {concurrency} 个序列。",
    },
    "offer": {
        "en": "Priced with {provider} ({pricing}) at {price:usd} per GPU-hour, as of {as_of}.",
        "zh": "按 {provider}（{pricing}）每 GPU 小时 {price:usd} 计价，价格日期 {as_of}。",
    },
    "training_layout": {
        "en": "Trains on {gpus} GPUs with fully sharded data parallelism (ZeRO-3){tp_text}{recompute_text}.",
        "zh": "使用 {gpus} 张卡全分片数据并行（ZeRO-3）训练{tp_text}{recompute_text}。",
    },
    "training_count_deadline": {
        "en": "{gpus} GPU(s) chosen: the fewest that finish within the target ({hours:,.0f} h); {fewer} GPUs would "
        "take {fewer_hours:,.0f} h.",
        "zh": "选择 {gpus} 张卡：能在目标时间内完成的最少卡数（{hours:,.0f} 小时）；"
        "{fewer} 张卡需要 {fewer_hours:,.0f} 小时。",
    },
    "training_count_largest": {
        "en": "{gpus} GPU(s) chosen: the most the limits allow, still {hours:,.0f} h.",
        "zh": "选择 {gpus} 张卡：限制内允许的最多卡数，仍需 {hours:,.0f} 小时。",
    },
    "training_count_fewest": {
        "en": "{gpus} GPU(s) chosen: the fewest the run fits on with no deadline asked ({hours:,.0f} h); more GPUs "
        "finish sooner at about the same cost.",
        "zh": "选择 {gpus} 张卡：未设截止时间时能装下的最少卡数（{hours:,.0f} 小时）；更多卡更快完成，成本大致相同。",
    },
    "fp8_training": {
        "en": "This GPU trains in FP8 too (precision 'fp8'): about {speedup:.1f}x faster, ~{hours:,.0f} h.",
        "zh": "该 GPU 也支持 FP8 训练：约快 {speedup:.1f} 倍，约 {hours:,.0f} 小时。",
    },
    "training_one_gpu": {
        "en": "Trains on one {gpu}, no sharding needed{recompute_text}.",
        "zh": "单张 {gpu} 即可训练，无需分片{recompute_text}。",
    },
    "image_batch": {
        "en": "Runs {batch} images at a time per GPU: the batch shares the per-pass launch cost.",
        "zh": "每张卡一次生成 {batch} 张图：批处理分摊每步的启动开销。",
    },
    "images_per_gpu": {
        "en": "Each GPU runs its own pipeline: about {per_gpu:.0f} images per hour per GPU.",
        "zh": "每张卡独立运行一条管线：每卡每小时约 {per_gpu:.0f} 张图。",
    },
    # warnings
    "no_nvlink_inference": {
        "en": "No NVLink on {gpu}: tensor parallelism runs over PCIe and costs latency; replicas scale better.",
        "zh": "{gpu} 没有 NVLink：张量并行走 PCIe，延迟更高；多副本扩展更好。",
    },
    "no_nvlink_training": {
        "en": "No NVLink on {gpu}: multi-GPU training will be slow (gradients and shards cross PCIe).",
        "zh": "{gpu} 没有 NVLink：多卡训练会很慢（梯度与分片经 PCIe 传输）。",
    },
    "rocm": {
        "en": "ROCm: expect roughly 10-20% less than tuned CUDA paths and time for tuning; MFU in training is lower.",
        "zh": "ROCm：相比调优后的 CUDA 路径约低 10-20%，需要预留调优时间；训练 MFU 更低。",
    },
    "gaudi": {
        "en": "Gaudi: needs manual integration (SynapseAI / Optimum Habana); estimates are spec-sheet based.",
        "zh": "Gaudi：需要手动集成（SynapseAI / Optimum Habana）；估算仅基于规格参数。",
    },
    "cann": {
        "en": "Ascend (CANN): a separate software stack with limited model support; figures are reported ones.",
        "zh": "昇腾（CANN）：独立软件栈，模型支持有限；参数为公开报道值，非官方数据。",
    },
    "infiniband": {
        "en": "Over 100B parameters across nodes: InfiniBand (or equivalent RDMA) is advised between nodes.",
        "zh": "参数超过 1000 亿且跨节点：节点间建议使用 InfiniBand（或同等 RDMA 网络）。",
    },
    "price_age": {
        "en": "The price is {days} days old (as of {as_of}); check it before you commit.",
        "zh": "价格已有 {days} 天（日期 {as_of}），下单前请核实。",
    },
    "spec_sheet": {
        "en": "Estimate is spec-sheet only: no published measurement backs it for {gpu} (low confidence).",
        "zh": "估算仅基于规格参数：{gpu} 没有公开实测数据支撑（置信度低）。",
    },
    "low_confidence_gpu": {
        "en": "{gpu} has no official datasheet; its figures come from secondary sources.",
        "zh": "{gpu} 没有官方规格书，参数来自二手来源。",
    },
    "fp16_for_bf16": {
        "en": "{gpu} has no BF16: it runs the model in FP16.",
        "zh": "{gpu} 不支持 BF16：以 FP16 运行。",
    },
    "weight_only": {
        "en": "{precision} weights are dequantised to 16-bit for compute on {gpu}.",
        "zh": "{gpu} 上 {precision} 权重需反量化为 16 位再计算。",
    },
    "queueing": {
        "en": "Holds {capacity} of the {concurrency} requested sequences at once; the rest wait in the queue.",
        "zh": "同时只能容纳 {concurrency} 个请求序列中的 {capacity} 个，其余排队。",
    },
    "long_run": {
        "en": "The run takes about {days:.0f} days on this configuration.",
        "zh": "该配置下训练约需 {days:.0f} 天。",
    },
    "no_offer_priced": {
        "en": "No rental offer under the constraints: costs are not given.",
        "zh": "在约束条件下没有可租用的报价：不提供成本。",
    },
    "misses": {"en": "Misses the target: {targets}.", "zh": "未达到目标：{targets}。"},
    "needs_at_least": {
        "en": "The smallest configuration that runs it: {gpus} x {gpu}.",
        "zh": "能运行它的最小配置：{gpus} 张 {gpu}。",
    },
    "layout_load": {
        "en": "{layout} chosen: it serves the load for {cost} against {other_cost} with {other}.",
        "zh": "选择 {layout}：满足负载的成本为 {cost}，而 {other} 需要 {other_cost}。",
    },
    "layout_throughput": {
        "en": "{layout} chosen: {tokens:,.0f} output tokens/s on these GPUs against {other_tokens:,.0f} with {other}.",
        "zh": "选择 {layout}：这些 GPU 上每秒输出 {tokens:,.0f} 个 token，而 {other} 为 {other_tokens:,.0f}。",
    },
    "layout_per_dollar": {
        "en": "{layout} chosen: {per_dollar:,.0f} output tokens per dollar against {other_per_dollar:,.0f} "
        "with {other}.",
        "zh": "选择 {layout}：每美元输出 {per_dollar:,.0f} 个 token，而 {other} 为 {other_per_dollar:,.0f}。",
    },
    "layout_targets": {
        "en": "{layout} chosen: {other} misses a target that this layout meets.",
        "zh": "选择 {layout}：{other} 达不到此布局能满足的目标。",
    },
    "layout_only": {
        "en": "{layout} is the only layout that fits.",
        "zh": "{layout} 是唯一装得下的布局。",
    },
    "expert_parallel": {
        "en": "Routed experts split over {ep} GPUs (expert parallel){dp_text}.",
        "zh": "路由专家切分到 {ep} 张卡（专家并行）{dp_text}。",
    },
    "pipeline_in_node": {
        "en": "Pipeline parallel {pp} x tensor parallel {tp} inside one node: more room for the KV cache per copy.",
        "zh": "节点内 {pp} 级流水线并行 x {tp} 卡张量并行：每个副本的 KV 缓存空间更大。",
    },
    "idle_copies": {
        "en": "{busy} of the {copies} copies are busy at {concurrency} concurrent sequences; the rest stand idle.",
        "zh": "并发 {concurrency} 个序列时，{copies} 个副本中只有 {busy} 个在工作，其余空闲。",
    },
    "thin_headroom": {
        "en": "Only {headroom:.1f}% of the memory is left over: fragmentation or a longer request may not fit.",
        "zh": "显存只剩 {headroom:.1f}%：碎片或更长的请求可能装不下。",
    },
    "beyond_context": {
        "en": "sequence_length {length} exceeds {model}'s context of {context} tokens: context extension (RoPE "
        "scaling) is assumed.",
        "zh": "序列长度 {length} 超过 {model} 的上下文 {context} 个 token：按上下文扩展（位置编码缩放）估算。",
    },
    # For the planner: an infeasible configuration that a lower precision would fit on fewer GPUs.
    "fits_at_precision": {
        "en": "At {precision} it fits on {gpus} x {gpu}.",
        "zh": "若改用 {precision}，{gpus} 张 {gpu} 即可装下。",
    },
    # exclusions
    "engine_vendor": {
        "en": "{engine} does not run on this vendor's GPUs.",
        "zh": "{engine} 不支持该厂商的 GPU。",
    },
    "layout_heads": {
        "en": "Tensor parallel {tp} does not divide the model's {heads} attention heads.",
        "zh": "张量并行 {tp} 不能整除模型的 {heads} 个注意力头。",
    },
    "layout_experts": {
        "en": "Expert parallel {ep} needs a mixture-of-experts model with at least {ep} routed experts.",
        "zh": "专家并行 {ep} 需要至少有 {ep} 个路由专家的混合专家模型。",
    },
    "layout_count": {
        "en": "A copy of this layout takes {layout_gpus} GPUs, which does not divide {gpus}.",
        "zh": "该布局每个副本占 {layout_gpus} 张卡，不能整除 {gpus}。",
    },
    "not_allowed": {"en": "Not in the allowed GPUs.", "zh": "不在允许的 GPU 列表中。"},
    "excluded_by_request": {"en": "Excluded by the request.", "zh": "被请求排除。"},
    "vendor_excluded": {"en": "Vendor {vendor} is not allowed.", "zh": "不允许厂商 {vendor}。"},
    "ecosystem_excluded": {"en": "Software stack {ecosystem} is not allowed.", "zh": "不允许软件栈 {ecosystem}。"},
    "no_fp8": {
        "en": "No FP8 support ({precision} needs Ada, Hopper, Blackwell, CDNA3 or Gaudi 2+): BF16 runs on it, and "
        "for serving so do INT4 weights, which take a quarter of the BF16 memory.",
        "zh": "不支持 FP8（{precision} 需要 Ada、Hopper、Blackwell、CDNA3 或 Gaudi 2 以上）：可改用 BF16；"
        "推理还可用 INT4 权重，显存只需 BF16 的四分之一。",
    },
    "no_precision": {
        "en": "Cannot run {precision}: no tensor cores for it.",
        "zh": "无法运行 {precision}：没有相应的张量核心。",
    },
    "does_not_fit": {
        "en": "Does not fit on {gpus} GPU(s) of this kind ({needed_gb:.0f} GB needed).",
        "zh": "{gpus} 张该型号的卡装不下（需要 {needed_gb:.0f} GB）。",
    },
    "needs_more_gpus": {
        "en": "Needs {gpus} GPUs, more than the {limit} allowed.",
        "zh": "需要 {gpus} 张卡，超过允许的 {limit} 张。",
    },
    "needs_more_nodes": {
        "en": "Needs {nodes} nodes, more than the {limit} allowed.",
        "zh": "需要 {nodes} 个节点，超过允许的 {limit} 个。",
    },
    "no_offer": {
        "en": "No offer under the constraints{detail}.",
        "zh": "在约束条件下没有报价{detail}。",
    },
    "over_budget": {
        "en": "Over budget: {hourly:usd} per hour against a limit of {limit:usd}.",
        "zh": "超出预算：每小时 {hourly:usd}，上限 {limit:usd}。",
    },
    "below_limit": {
        "en": "Ranked {rank}, below the {limit} options asked for.",
        "zh": "排名第 {rank}，低于请求返回的 {limit} 个选项。",
    },
    # total cost of ownership
    "tco_price_low_confidence": {
        "en": "The purchase price of {system} is a low-confidence figure ({source}); pass purchase_usd if you have "
        "a quote.",
        # The source is a citation in its own language; the assumptions list it.
        "zh": "{system} 的采购价置信度低（来源见假设列表）；如有报价请传入 purchase_usd。",
    },
    "tco_price_accelerators_only": {
        "en": "The {system} price covers the accelerators only, not a full server: host CPUs, memory, chassis and "
        "networking are extra.",
        "zh": "{system} 的价格只含加速卡，不是整机：主机 CPU、内存、机箱和网络另计。",
    },
    "tco_purchase_age": {
        "en": "The purchase price is {days} days old (as of {as_of}); street prices move, check a current quote.",
        "zh": "采购价已有 {days} 天（日期 {as_of}），市场价格会变动，请核实最新报价。",
    },
    "tco_offer_age": {
        "en": "The {provider} {pricing} price is {days} days old (as of {as_of}); check it before you commit.",
        "zh": "{provider} {pricing}价格已有 {days} 天（日期 {as_of}），下单前请核实。",
    },
    "tco_reserved_3y_longer": {
        "en": "A 3-year reservation commits to 3 years; only the {years} year(s) compared are counted.",
        "zh": "3 年预留需承诺 3 年；此处只计入比较的 {years} 年。",
    },
    "tco_no_offer": {"en": "No {pricing} offer for {gpu}.", "zh": "{gpu} 没有{pricing}报价。"},
    "tco_no_offer_from": {
        "en": "No {pricing} offer for {gpu} from {providers}.",
        "zh": "{providers} 没有 {gpu} 的{pricing}报价。",
    },
}

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


@cache
def _template(code: str, lang: Lang) -> tuple[str, tuple[str, ...]]:
    """A message as str.format takes it, and the fields written `{name:usd}`: amounts in USD as `money` writes them."""
    text = MESSAGES[code][lang]
    return _USD_FIELD.sub(r"{\1}", text), tuple(_USD_FIELD.findall(text))


def say(code: str, lang: Lang, **figures: object) -> str:
    """The sentence for a message code in a language."""
    text, amounts = _template(code, lang)
    for name in amounts:
        value = figures[name]
        assert isinstance(value, int | float), (code, name)
        figures[name] = money(float(value), "USD")
    return text.format(**figures)


def provider_name(catalog: Catalog | None, provider_id: str) -> str:
    """A provider as people write it ("CoreWeave", not "coreweave"); the id when the catalog does not know it."""
    provider = catalog.provider(provider_id) if catalog is not None else None
    return provider.name if provider else provider_id


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
    "fp8_decode_share_of_byte_saving": (
        "FP8 decode: share of the byte saving realized",
        "FP8 解码实际获得的带宽节省比例",
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
    return text["fits"].format(
        configuration=_configuration(option, lang, catalog), parts=_SUMMARY[lang]["separator"].join(parts)
    )


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
