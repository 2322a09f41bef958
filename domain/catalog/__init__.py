"""The catalog: records, the immutable snapshot, reference data and pasted model configs."""

from domain.catalog.records import (
    CatalogError,
    Confidence,
    DiffusionModel,
    Ecosystem,
    Gpu,
    LinkKind,
    LlmModel,
    Mla,
    ModelSpec,
    MoE,
    Offer,
    Pricing,
    Provider,
    System,
    Vendor,
    decode_records,
    lookup_key,
)
from domain.catalog.snapshot import Catalog

__all__ = [
    "Catalog",
    "CatalogError",
    "Confidence",
    "DiffusionModel",
    "Ecosystem",
    "Gpu",
    "LinkKind",
    "LlmModel",
    "Mla",
    "MoE",
    "ModelSpec",
    "Offer",
    "Pricing",
    "Provider",
    "System",
    "Vendor",
    "decode_records",
    "lookup_key",
]
