"""Side-by-side GPU comparison: ratios of each GPU's figures to a baseline GPU's."""

from __future__ import annotations

from domain.catalog import Catalog, Gpu
from domain.workloads.results import GpuRatios


def half_precision_tflops(gpu: Gpu) -> float | None:
    """The dense 16-bit tensor figure: BF16 where supported, else FP16 (T4, V100, Turing cards)."""
    return gpu.tflops.bf16 or gpu.tflops.fp16


def _ratio(value: float | None, base: float | None) -> float | None:
    return round(value / base, 3) if value is not None and base else None


def compare_gpus(catalog: Catalog, gpus: list[Gpu]) -> list[GpuRatios]:
    """Ratios of every GPU (the first included, at 1.0) to the first one."""
    base = gpus[0]
    base_offer = catalog.lowest_prices(base.id).get("on_demand")
    rows = []
    for gpu in gpus:
        offer = catalog.lowest_prices(gpu.id).get("on_demand")
        rows.append(
            GpuRatios(
                gpu=gpu,
                memory_gb=_ratio(gpu.memory_gb, base.memory_gb),
                memory_bandwidth_gbps=_ratio(gpu.memory_bandwidth_gbps, base.memory_bandwidth_gbps),
                bf16_tflops=_ratio(half_precision_tflops(gpu), half_precision_tflops(base)),
                fp8_tflops=_ratio(gpu.tflops.fp8, base.tflops.fp8),
                tdp_w=_ratio(gpu.tdp_w, base.tdp_w),
                usd_per_gpu_hour=_ratio(
                    offer.usd_per_gpu_hour if offer else None, base_offer.usd_per_gpu_hour if base_offer else None
                ),
                on_demand=offer,
            )
        )
    return rows
