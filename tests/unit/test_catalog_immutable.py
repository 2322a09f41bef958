"""The catalog snapshot cannot change after construction: every request on it reads the same records."""

from __future__ import annotations

import pytest

from api.adapters.storage.reference import load_reference_catalog, shipped_ledger
from domain.catalog import Catalog


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_reference_catalog()


@pytest.mark.parametrize("name", ["gpus", "offers", "version", "key", "accuracy", "derived", "_gpus"])
def test_no_attribute_can_be_set(catalog: Catalog, name: str) -> None:
    with pytest.raises(AttributeError, match="immutable"):
        setattr(catalog, name, ())


@pytest.mark.parametrize("name", ["gpus", "accuracy", "_aliases"])
def test_no_attribute_can_be_deleted(catalog: Catalog, name: str) -> None:
    with pytest.raises(AttributeError, match="immutable"):
        delattr(catalog, name)


def test_records_and_their_lists_are_frozen(catalog: Catalog) -> None:
    assert isinstance(catalog.gpus, tuple) and isinstance(catalog.offers, tuple) and isinstance(catalog.models, tuple)
    with pytest.raises(AttributeError):
        catalog.gpus[0].memory_gb = 1.0  # type: ignore[misc]


def test_a_ledger_makes_another_snapshot_with_another_key(catalog: Catalog) -> None:
    bare = catalog.with_accuracy(None)
    assert bare is not catalog and bare.version == catalog.version and bare.gpus is catalog.gpus
    assert bare.accuracy is None and catalog.accuracy is shipped_ledger()
    # Facts derived with a ledger (bands, confidence) are never shared with a snapshot without it.
    assert bare.key != catalog.key
    with pytest.raises(AttributeError, match="immutable"):
        bare.accuracy = shipped_ledger()
