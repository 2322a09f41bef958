"""GPUs, systems and providers as the catalog endpoints send them."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Literal

import msgspec

from api.schemas.base import Page, Wire
from domain.catalog import Confidence, Ecosystem, LinkKind, Vendor
from domain.workloads.requests import Lang


class TflopsRead(Wire):
    """Dense peak throughput in TFLOPS (int8 in TOPS); null where the GPU has no such path."""

    fp32: float | None
    tf32: float | None
    fp16: float | None
    bf16: float | None
    fp8: float | None
    int8: float | None
    fp4: float | None


class InterconnectRead(Wire):
    """GPU-to-GPU link; bandwidth is the total bidirectional GB/s per GPU."""

    kind: LinkKind
    bandwidth_gbps: float | None
    description: str
    domain_gpus: Annotated[
        int,
        msgspec.Meta(
            description="GPUs one scale-up (NVLink) domain joins at this bandwidth: 8 on a board or machine, "
            "72 in an NVL72 rack; tensor and expert parallel groups may span it."
        ),
    ]


class SupportsRead(Wire):
    """Features that decide what a GPU can run well."""

    fp8: bool
    fp4: bool
    nvlink: bool


class PriceRead(Wire):
    """The cheapest offer of one pricing model."""

    offer_id: str
    provider: str
    usd_per_gpu_hour: float
    gpus_per_instance: int
    as_of: date
    source: str


class LowestPricesRead(Wire):
    """The cheapest known offer per pricing model; null where nobody offers it."""

    on_demand: PriceRead | None = None
    reserved_1y: PriceRead | None = None
    reserved_3y: PriceRead | None = None
    spot: PriceRead | None = None
    capacity_block: PriceRead | None = None


class GpuRead(Wire):
    """A GPU with datasheet (dense) figures, sources and lowest prices."""

    id: str
    name: str
    vendor: Vendor
    architecture: str
    launch_year: int
    segment: Literal["datacenter", "workstation", "consumer"]
    memory_gb: float
    memory_type: str
    memory_bandwidth_gbps: float
    tflops: TflopsRead
    tdp_w: float
    form_factor: str
    interconnect: InterconnectRead
    ecosystem: Ecosystem
    supports: SupportsRead
    aliases: list[str]
    sources: list[str]
    confidence: Confidence
    market: Literal["global", "china"]
    half_rate_fp32_accumulate: bool
    notes: str
    lowest_price: LowestPricesRead


class GpuList(Page):
    """A page of GPUs."""

    items: list[GpuRead]


class GpuRatios(Wire):
    """One GPU's figures divided by the first GPU's; null where either side lacks the figure."""

    gpu: str
    memory_gb: float | None
    memory_bandwidth_gbps: float | None
    bf16_tflops: float | None
    fp8_tflops: float | None
    tdp_w: float | None
    usd_per_gpu_hour: float | None


class GpuComparisonRead(Wire):
    """GPUs side by side with ratios to the first one and a sentence a chatbot can say."""

    baseline: str
    items: list[GpuRead]
    ratios: list[GpuRatios]
    summary: str
    lang: Lang


class GpuRef(Wire):
    """A GPU named inside another record."""

    id: str
    name: str
    vendor: Vendor


class SystemPriceRead(Wire):
    """A purchase price with its basis, date and source."""

    usd: float
    usd_low: float | None
    usd_high: float | None
    basis: Literal["list", "street", "quote", "estimate"]
    as_of: date
    source: str
    confidence: Confidence


class SystemRead(Wire):
    """An 8-accelerator server."""

    id: str
    name: str
    vendor: Vendor
    gpu: GpuRef
    gpu_count: int
    total_memory_gb: float
    power_kw: float | None
    power_note: str
    fabric: str
    network: str
    price: SystemPriceRead | None
    aliases: list[str]
    sources: list[str]
    notes: str


class SystemList(Wire):
    """Every system."""

    items: list[SystemRead]
    total: int


class ProviderRead(Wire):
    """A company renting GPUs."""

    id: str
    name: str
    kind: Literal["hyperscaler", "gpu_cloud", "marketplace"]
    url: str
    offer_count: int
    sources: list[str]
    notes: str
    feed: str | None = None
    last_synced_at: datetime | None = None


class ProviderList(Wire):
    """Every provider."""

    items: list[ProviderRead]
    total: int
