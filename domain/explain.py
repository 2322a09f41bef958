"""Sentences a person or a chatbot can say, in English and Chinese."""

from __future__ import annotations

from typing import Literal

from domain.catalog import Catalog
from domain.compare import GpuRatios

Lang = Literal["en", "zh"]

# One template set per language; the logic that fills them is shared.
_COMPARISON = {
    "en": {
        "row": "{name} has {memory} the memory, {bandwidth} the bandwidth and {bf16} the dense BF16 compute "
        "at {price} the on-demand price",
        "rows": "Compared with {base}: {rows}. ",
        "alone": "{base}. ",
        "separator": "; ",
        "largest": "Most memory: {name} ({memory:g} GB).",
        "cheapest": " Cheapest on demand: {name} at ${price:.2f}/GPU-hour ({provider}, {as_of}).",
    },
    "zh": {
        "row": "{name}：显存 {memory}，带宽 {bandwidth}，BF16 稠密算力 {bf16}，按需价格 {price}",
        "rows": "以 {base} 为基准：{rows}。",
        "alone": "{base}。",
        "separator": "；",
        "largest": "显存最大：{name}（{memory:g} GB）。",
        "cheapest": "按需最便宜：{name}，每 GPU 小时 {price:.2f} 美元（{provider}，{as_of}）。",
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
            price=_times(r.usd_per_gpu_hour),
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
        provider = catalog.provider(offer.provider)
        summary += text["cheapest"].format(
            name=gpu.name,
            price=offer.usd_per_gpu_hour,
            provider=provider.name if provider else offer.provider,
            as_of=offer.as_of.isoformat(),
        )
    return summary
