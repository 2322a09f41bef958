"""Catalog tables for the terminal: GPUs side by side and rental offers."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import RenderableType
from rich.text import Text

from api.cli.fit_table import Column, FitTable, Step
from api.cli.tables import (
    _block,
    _figure,
    _table,
    label,
    priced,
    shorten,
)
from api.schemas import GpuComparisonRead, GpuRead, OfferList
from domain.estimates import Lang

# Comparison


def _half_precision(gpu: GpuRead) -> float | None:
    return gpu.tflops.bf16 or gpu.tflops.fp16


def _times(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _on_demand(gpu: GpuRead) -> str:
    price = gpu.lowest_price.on_demand
    return "-" if price is None else f"{price.usd_per_gpu_hour:.2f} ({price.provider})"


# Product names of software stacks and links, written the way their makers write them.
_STACKS = {"cuda": "CUDA", "rocm": "ROCm", "gaudi": "Gaudi (SynapseAI)", "cann": "CANN"}
_LINKS = {
    "nvswitch": "NVSwitch",
    "nvlink": "NVLink",
    "nvlink_bridge": "NVLink bridge",
    "infinity_fabric": "Infinity Fabric",
    "ethernet": "Ethernet (RoCE)",
    "hccs": "HCCS",
    "pcie": "PCIe",
}


def _link(gpu: GpuRead) -> str:
    bandwidth = gpu.interconnect.bandwidth_gbps
    kind = _LINKS.get(gpu.interconnect.kind, gpu.interconnect.kind)
    return kind + (f" {bandwidth:,.0f} GB/s" if bandwidth else "")


_SPEC_ROWS: list[tuple[str, Callable[[GpuRead, Lang], str]]] = [
    ("vendor", lambda g, _: f"{g.vendor} {g.architecture} ({g.launch_year})"),
    ("memory", lambda g, _: f"{g.memory_gb:g} GB {g.memory_type}"),
    ("bandwidth", lambda g, _: _figure(g.memory_bandwidth_gbps)),
    ("bf16", lambda g, _: _figure(_half_precision(g), ",.1f")),
    ("fp8", lambda g, _: _figure(g.tflops.fp8, ",.1f")),
    ("fp4", lambda g, _: _figure(g.tflops.fp4, ",.1f")),
    ("tdp", lambda g, _: _figure(g.tdp_w)),
    ("link", lambda g, _: _link(g)),
    ("stack", lambda g, _: _STACKS.get(g.ecosystem, g.ecosystem)),
    ("on_demand", lambda g, _: _on_demand(g)),
    ("confidence", lambda g, lang: label(f"confidence_{g.confidence}", lang)),
]


def comparison_view(comparison: GpuComparisonRead, lang: Lang) -> list[RenderableType]:
    """Specifications side by side, ratios to the first GPU, the summary."""
    gpus = comparison.items
    specs = FitTable(
        [Column("", wrap=True), *(Column(f"{gpu.name} ({gpu.id})", "right", wrap=True) for gpu in gpus)], split=True
    )
    for key, cell in _SPEC_ROWS:
        specs.add_row(label(key, lang), *(cell(gpu, lang) for gpu in gpus))
    ratios = _table(
        (label("gpu", lang), "left"),
        *((label(key, lang), "right") for key in ("memory", "bandwidth", "bf16", "fp8", "tdp", "price_ratio")),
        split=True,
    )
    for ratio in comparison.ratios:
        ratios.add_row(
            ratio.gpu,
            _times(ratio.memory_gb),
            _times(ratio.memory_bandwidth_gbps),
            _times(ratio.bf16_tflops),
            _times(ratio.fp8_tflops),
            _times(ratio.tdp_w),
            _times(ratio.usd_per_gpu_hour),
        )
    return [
        _block(label("specs", lang), specs),
        _block(label("ratios", lang, base=comparison.baseline), ratios),
        _block(label("summary", lang), Text(comparison.summary)),
    ]


# Offers


def offers_view(page: OfferList, lang: Lang) -> list[RenderableType]:
    """A page of offers: who rents which GPU, how, at what price, since when, according to whom."""
    if not page.items:
        return [Text(label("no_offers", lang, total=page.total))]
    table = _table(
        (label("provider", lang), "left"),
        (label("gpu", lang), "left"),
        (label("per_instance", lang), "right"),
        (label("pricing", lang), "left"),
        (label("usd_gpu_hour", lang), "right"),
        (label("usd_instance_hour", lang), "right"),
        (label("as_of", lang), "left"),
        (label("age", lang), "right"),
        (label("source", lang), "left"),
        wrap=(3, 8),
        # Narrower first: no source, no age, the pricing and then the date under the provider.
        steps=(Step(8), Step(7), Step(3, into=0), Step(6, into=0)),
    )
    for offer in page.items:
        table.add_row(
            offer.provider,
            offer.gpu,
            str(offer.gpus_per_instance),
            priced(offer.pricing, offer.tier, lang),
            f"{offer.usd_per_gpu_hour:,.2f}",
            f"{offer.usd_per_instance_hour:,.2f}",
            offer.as_of.isoformat(),
            str(offer.age_days),
            shorten(offer.source),
        )
    shown = f"{page.offset + 1}-{page.offset + len(page.items)}"
    parts: list[RenderableType] = [_block(label("offers", lang, shown=shown, total=page.total), table)]
    rest = page.total - page.offset - len(page.items)
    if rest > 0:
        parts.append(Text(label("more_offers", lang, rest=rest, offset=page.offset + len(page.items)), style="dim"))
    return parts
