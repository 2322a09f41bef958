"""Parse the curated TOML reference data (domain/data/) into a validated Catalog."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping

from domain.catalog.records import CatalogError, Gpu, ModelSpec, Offer, Provider, System, decode_records
from domain.catalog.snapshot import Catalog

# file name -> (table name, record type); one file per record kind keeps reviews of price changes small.
REFERENCE_FILES = {
    "gpus.toml": ("gpus", Gpu),
    "systems.toml": ("systems", System),
    "providers.toml": ("providers", Provider),
    "offers.toml": ("offers", Offer),
    "models.toml": ("models", ModelSpec),
}


def parse_reference(documents: Mapping[str, str]) -> Catalog:
    """Build the catalog from the text of each reference file; every bad record is named in the error."""
    tables: dict[str, list] = {}
    problems: list[str] = []
    for file_name, (table, record_type) in REFERENCE_FILES.items():
        try:
            raw = tomllib.loads(documents[file_name]).get(table, [])
            tables[table] = decode_records(table.removesuffix("s"), raw, record_type)
        except KeyError:
            problems.append(f"{file_name}: missing")
        except tomllib.TOMLDecodeError as error:
            problems.append(f"{file_name}: {error}")
        except CatalogError as error:
            problems.extend(error.problems)
    if problems:
        raise CatalogError(problems)
    return Catalog(**tables)
