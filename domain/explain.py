"""Sentences a person or a chatbot can say, in English and Chinese."""

from __future__ import annotations

from typing import Literal

from domain.catalog import Catalog
from domain.compare import GpuRatios

Lang = Literal["en", "zh"]


def _times(value: float | None) -> str:
    return f"{value:.2f}x" if value is not None else "n/a"


def comparison_summary(catalog: Catalog, rows: list[GpuRatios], lang: Lang) -> str:
    """Two or three sentences: how each GPU compares with the first, most memory, cheapest on demand."""
    base = rows[0].gpu
    largest = max(rows, key=lambda r: (r.gpu.memory_gb, r.gpu.id)).gpu
    priced = [r for r in rows if r.on_demand is not None]
    cheapest = min(priced, key=lambda r: (r.on_demand.usd_per_gpu_hour, r.gpu.id)) if priced else None  # type: ignore[union-attr]
    others = rows[1:]
    if lang == "zh":
        parts = [
            f"{r.gpu.name}：显存 {_times(r.memory_gb)}，带宽 {_times(r.memory_bandwidth_gbps)}，"
            f"BF16 稠密算力 {_times(r.bf16_tflops)}，按需价格 {_times(r.usd_per_gpu_hour)}"
            for r in others
        ]
        text = f"以 {base.name} 为基准：" + "；".join(parts) + "。" if parts else f"{base.name}。"
        text += f"显存最大：{largest.name}（{largest.memory_gb:g} GB）。"
        if cheapest and cheapest.on_demand:
            offer = cheapest.on_demand
            provider = catalog.provider(offer.provider)
            text += (
                f"按需最便宜：{cheapest.gpu.name}，每 GPU 小时 {offer.usd_per_gpu_hour:.2f} 美元"
                f"（{provider.name if provider else offer.provider}，{offer.as_of.isoformat()}）。"
            )
        return text
    parts = [
        f"{r.gpu.name} has {_times(r.memory_gb)} the memory, {_times(r.memory_bandwidth_gbps)} the bandwidth "
        f"and {_times(r.bf16_tflops)} the dense BF16 compute at {_times(r.usd_per_gpu_hour)} the on-demand price"
        for r in others
    ]
    text = f"Compared with {base.name}: " + "; ".join(parts) + ". " if parts else f"{base.name}. "
    text += f"Most memory: {largest.name} ({largest.memory_gb:g} GB)."
    if cheapest and cheapest.on_demand:
        offer = cheapest.on_demand
        provider = catalog.provider(offer.provider)
        text += (
            f" Cheapest on demand: {cheapest.gpu.name} at ${offer.usd_per_gpu_hour:.2f}/GPU-hour "
            f"({provider.name if provider else offer.provider}, {offer.as_of.isoformat()})."
        )
    return text
