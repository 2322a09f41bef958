"""Read the reference data files shipped inside the domain package."""

from __future__ import annotations

from importlib import resources

from domain.catalog import Catalog
from domain.reference import REFERENCE_FILES, parse_reference


def read_reference_documents() -> dict[str, str]:
    """The text of every reference file."""
    folder = resources.files("domain.data")
    return {name: folder.joinpath(name).read_text(encoding="utf-8") for name in REFERENCE_FILES}


def load_reference_catalog() -> Catalog:
    """The catalog as shipped, validated."""
    return parse_reference(read_reference_documents())
