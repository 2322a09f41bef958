"""Wire Structs of the published contract, kept apart from domain types so a domain refactor cannot change it."""

from __future__ import annotations

from api.schemas.base import FieldError, Page, Problem, Wire
from api.schemas.catalog import (
    GpuComparisonRead,
    GpuList,
    GpuRatios,
    GpuRead,
    GpuRef,
    InterconnectRead,
    LowestPricesRead,
    PriceRead,
    ProviderList,
    ProviderRead,
    SupportsRead,
    SystemList,
    SystemPriceRead,
    SystemRead,
    TflopsRead,
)
from api.schemas.models import (
    DiffusionModelRead,
    LlmModelRead,
    MlaRead,
    ModelComponentRead,
    ModelList,
    ModelRead,
    MoERead,
)
from api.schemas.offers import OfferBulkRead, OfferHistoryList, OfferHistoryRead, OfferList, OfferRead, OfferWrite
from api.schemas.service import LiveRead, ReadyRead, ToolManifestRead, ToolOperationRead
from domain.workloads.requests import Lang

__all__ = [
    "DiffusionModelRead",
    "FieldError",
    "GpuComparisonRead",
    "GpuList",
    "GpuRatios",
    "GpuRead",
    "GpuRef",
    "InterconnectRead",
    "Lang",
    "LiveRead",
    "LlmModelRead",
    "LowestPricesRead",
    "MlaRead",
    "MoERead",
    "ModelComponentRead",
    "ModelList",
    "ModelRead",
    "OfferBulkRead",
    "OfferHistoryList",
    "OfferHistoryRead",
    "OfferList",
    "OfferRead",
    "OfferWrite",
    "Page",
    "PriceRead",
    "Problem",
    "ProviderList",
    "ProviderRead",
    "ReadyRead",
    "SupportsRead",
    "SystemList",
    "SystemPriceRead",
    "SystemRead",
    "TflopsRead",
    "ToolManifestRead",
    "ToolOperationRead",
    "Wire",
]
