"""Read the reference data files shipped inside the domain package, and the calibration ledger built from them."""

from __future__ import annotations

from functools import cache
from importlib import resources

from domain.catalog import Catalog
from domain.planning.accuracy import CalibrationPoint, Ledger, build_ledger, parse_calibration
from domain.reference import REFERENCE_FILES, parse_reference

CALIBRATION_FILE = "calibration.toml"


def read_reference_documents() -> dict[str, str]:
    """The text of every reference file."""
    folder = resources.files("domain.data")
    return {name: folder.joinpath(name).read_text(encoding="utf-8") for name in REFERENCE_FILES}


def calibration_points() -> list[CalibrationPoint]:
    """The public measurements the model is checked against."""
    return parse_calibration(resources.files("domain.data").joinpath(CALIBRATION_FILE).read_text(encoding="utf-8"))


@cache
def shipped_ledger() -> Ledger:
    """The ledger of the shipped catalog and calibration points: built once per process."""
    return build_ledger(parse_reference(read_reference_documents()), calibration_points())


def with_ledger(catalog: Catalog) -> Catalog:
    """The catalog with the calibration ledger attached (bands and confidence come from it)."""
    catalog.accuracy = shipped_ledger()
    return catalog


def load_reference_catalog() -> Catalog:
    """The catalog as shipped, validated, with its ledger."""
    return with_ledger(parse_reference(read_reference_documents()))
