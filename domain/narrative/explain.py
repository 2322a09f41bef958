"""Sentences a person or a chatbot can say, in English and Chinese."""

from __future__ import annotations

import re
from functools import cache

from domain.catalog import Catalog, Pricing
from domain.narrative.messages import MESSAGES
from domain.workloads.requests import USE_CASE_TARGETS, InferenceWorkload, Lang
from domain.workloads.results import Parallelism

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
    "lora_branch_bandwidth": ("LoRA branches' memory-bandwidth utilization", "LoRA 分支的显存带宽利用率"),
    "adapter_branches": ("LoRA adapter branches", "LoRA 适配器分支"),
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
    "denoiser_gemm_share": ("denoiser GEMM rate vs SDXL", "去噪网络矩阵乘速率（相对 SDXL）"),
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
    "moe_layer_extra_us": (
        "MoE decode: the engine's extra latency per layer at one sequence (µs)",
        "MoE 解码：推理引擎单序列时每层额外延迟（微秒）",
    ),
    "fp8_gemm_latency_us": (
        "FP8 decode: fixed latency per weight GEMM (µs)",
        "FP8 解码：每个权重 GEMM 的固定延迟（微秒）",
    ),
    "w4_moe_decode_latency": (
        "4-bit MoE decode: latency per MoE layer and expert, expert bytes rate",
        "4 位 MoE 解码：每个 MoE 层与每个专家的延迟、专家权重读取速率",
    ),
    "ring_all_reduce_link_share": (
        "large all-reduces: share of the link rate (NCCL ring)",
        "大消息全归约：链路带宽利用比例（NCCL 环）",
    ),
    "mla_prefill_speed": ("MLA prefill: block speed over the 16-bit rate", "MLA 预填充：相对 16 位速率的模块速度"),
    "mla_prefill_speed_16_heads": (
        "MLA prefill: block speed at 16 heads per GPU",
        "MLA 预填充：每卡 16 个头时的模块速度",
    ),
    "mla_prefill_speed_128_heads": (
        "MLA prefill: block speed at 128 heads per GPU",
        "MLA 预填充：每卡 128 个头时的模块速度",
    ),
    "expert_all_to_all_us": ("expert all-to-all per MoE layer (µs)", "每个 MoE 层专家全交换（微秒）"),
    "attention_mfu": ("attention compute utilization", "注意力算力利用率"),
    "fp8_gemm_rate": ("FP8 GEMMs: rate over the 16-bit rate", "FP8 GEMM：相对 16 位的速率"),
    "fp4_compute": ("FP4 GEMMs: rate over the 16-bit MFU", "FP4 GEMM：相对 16 位利用率的速率"),
    "weight_only_compute": ("weight-only 4-bit GEMMs: rate over the 16-bit rate", "仅权重 4 位 GEMM：相对 16 位的速率"),
    "moe_gemm_half_rows": ("MoE expert GEMMs: rows per expert at half rate", "MoE 专家 GEMM：半速时每专家行数"),
    "block_fp8_moe_share": ("block-scaled FP8 experts: share of the FP8 rate", "分块缩放 FP8 专家：FP8 速率比例"),
    "mbu_decay_per_doubling": ("bandwidth share per doubling of the group", "并行组每扩大一倍的带宽比例"),
    "floor_growth_per_doubling": ("step floor growth per doubling of the group", "并行组每扩大一倍的单步下限增长"),
    "inter_node_hop_us": ("latency between nodes (µs)", "节点间延迟（微秒）"),
    "inter_node_gbps": ("bandwidth between nodes (GB/s)", "节点间带宽（GB/s）"),
    "low_precision_share": (
        "FP8/FP4 training: share of the step in low-precision GEMMs",
        "FP8/FP4 训练：步时中低精度 GEMM 的占比",
    ),
    "output_lengths": ("output lengths: spread and the drain of a finite job", "输出长度：分布与有限任务的收尾"),
    "moe_train": ("MoE training: share of the dense MFU", "MoE 训练：相对稠密模型的算力利用率"),
    "pytorch_train": (
        "PyTorch-native (FSDP) stack: share of Megatron-Core's MFU",
        "PyTorch 原生（FSDP）训练栈：相对 Megatron-Core 的算力利用率",
    ),
    "qlora_slowdown": ("QLoRA dequantization slowdown", "QLoRA 反量化减速"),
    "fp8_prefill": ("8-bit compute: rate over the 16-bit rate", "8 位计算：相对 16 位的速率"),
    "diffusion_pass_floor_ms": ("denoiser pass floor (ms)", "去噪单次下限（毫秒）"),
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


def percent(share: float) -> str:
    """A share as a percentage with three significant digits."""
    return f"{share * 100:.3g}%"
