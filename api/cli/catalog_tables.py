"""Catalog tables for the terminal: GPUs side by side and rental offers."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.console import RenderableType
from rich.text import Text

from api.cli.fit_table import Column, FitTable, Step
from api.cli.labels import label
from api.cli.tables import (
    _block,
    _figure,
    _table,
    priced,
    shorten,
)
from api.schemas import DiffusionModelRead, GpuComparisonRead, GpuRead, LlmModelRead, OfferList
from domain.catalog import Gpu
from domain.pricing.compare import half_precision_tflops
from domain.workloads.requests import Lang

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


# The GPU catalog


def gpus_view(version: str, gpus: Sequence[Gpu], price: Callable[[str], float | None]) -> list[RenderableType]:
    """Every GPU in a row: id and name whole, memory, speeds, power, link, stack and the cheapest on-demand price."""
    table = FitTable(
        [
            Column("id"),
            Column("name", wrap=True),
            Column("memory", "right", wrap=True),
            Column("GB/s", "right"),
            Column("BF16", "right"),
            Column("FP8", "right"),
            Column("TDP W", "right"),
            Column("link", wrap=True),
            Column("stack"),
            Column("$/GPU-h", "right"),
        ],
        # Narrower first: no link, no stack, no TDP, then the name under the id and the bandwidth under the memory.
        steps=(Step(7), Step(8), Step(6), Step(1, into=0), Step(3, into=2)),
    )
    for gpu in gpus:
        bf16, usd = half_precision_tflops(gpu), price(gpu.id)
        table.add_row(
            gpu.id,
            gpu.name + (" (low confidence)" if gpu.confidence == "low" else ""),
            f"{gpu.memory_gb:g} GB {gpu.memory_type}",
            f"{gpu.memory_bandwidth_gbps:g}",
            f"{bf16:g}" if bf16 else "-",
            f"{gpu.tflops.fp8:g}" if gpu.tflops.fp8 else "-",
            f"{gpu.tdp_w:g}",
            _LINKS.get(gpu.interconnect.kind, gpu.interconnect.kind),
            _STACKS.get(gpu.ecosystem, gpu.ecosystem),
            f"{usd:.2f}" if usd is not None else "-",
        )
    return [_block(f"gpu-advisor catalog {version}: {len(gpus)} GPUs (dense TFLOPS)", table)]


# Workload models


def _model_size(model: LlmModelRead | DiffusionModelRead) -> str:
    if isinstance(model, DiffusionModelRead):
        return f"{model.denoiser.params_b:g}B denoiser"
    active = f" ({model.active_params_b:g}B active)" if model.active_params_b else ""
    return f"{model.params_b:g}B{active}"


def _model_shape(model: LlmModelRead | DiffusionModelRead) -> str:
    if isinstance(model, DiffusionModelRead):
        return f"{model.native_resolution}px, {model.default_steps} steps"
    return f"{model.layers} layers, {model.attention.upper()}, {model.max_context:,} context"


def models_view(models: Sequence[LlmModelRead | DiffusionModelRead]) -> list[RenderableType]:
    """Every model in a row: the id --model takes, its name, size, shape, precision and other names it answers to."""
    table = FitTable(
        [
            Column("id"),
            Column("name", wrap=True),
            Column("parameters", "right", wrap=True),
            Column("shape", wrap=True),
            Column("weights", wrap=True),
            Column("also known as", wrap=True),
        ],
        # Narrower first: no other names, no shape, then the name under the id.
        steps=(Step(5), Step(3), Step(1, into=0)),
    )
    for model in models:
        table.add_row(
            model.id,
            model.name,
            _model_size(model),
            _model_shape(model),
            model.native_precision if isinstance(model, LlmModelRead) else "-",
            ", ".join(alias for alias in model.aliases if alias != model.name),
        )
    return [_block(f"{len(models)} models", table)]


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
