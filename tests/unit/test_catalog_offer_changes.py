"""A price change is served from the snapshot it changes: the catalog with other offers is built from the old one
(only the offers checked again), its version is what building it whole gives, and the published view keeps the wire
objects of everything the change did not touch."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import msgspec
import pytest

from api.adapters.storage.reference import load_reference_catalog
from api.services.catalog_view import CatalogView
from domain.catalog import Catalog, CatalogError, Offer
from domain.catalog.digest import DIGEST_MODULUS, offers_delta, offers_digest


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_reference_catalog()


def whole(catalog: Catalog, offers: list[Offer]) -> Catalog:
    return Catalog(
        gpus=catalog.gpus, systems=catalog.systems, providers=catalog.providers, offers=offers, models=catalog.models
    )


def test_the_version_does_not_depend_on_the_order_offers_come_in(catalog: Catalog) -> None:
    shuffled = list(catalog.offers)
    random.Random(7).shuffle(shuffled)
    assert whole(catalog, shuffled).version == catalog.version
    assert whole(catalog, list(catalog.offers[1:])).version != catalog.version


@pytest.mark.parametrize("seed", range(5))
def test_a_snapshot_with_other_offers_is_the_one_built_whole(catalog: Catalog, seed: int) -> None:
    rng = random.Random(seed)
    changed = [
        msgspec.structs.replace(offer, usd_per_gpu_hour=round(offer.usd_per_gpu_hour * (1 + rng.random()), 4))
        for offer in rng.sample(catalog.offers, 5)
    ]
    added = msgspec.structs.replace(rng.choice(catalog.offers), id=f"added-{seed}")
    deleted = [offer.id for offer in rng.sample(catalog.offers, 3) if offer not in changed]
    replaced = {offer.id for offer in changed} | set(deleted)
    expected = whole(catalog, [o for o in catalog.offers if o.id not in replaced] + [*changed, added])

    derived = catalog.with_offers([*changed, added], deleted)

    assert derived.version == expected.version and derived.offers == expected.offers
    assert derived.offers_digest == expected.offers_digest == offers_digest(expected.offers)
    assert all(derived.offers_for_gpu(gpu.id) == expected.offers_for_gpu(gpu.id) for gpu in catalog.gpus)
    ledgered = expected.with_accuracy(catalog.accuracy)
    for reads in ("structure", "gpu_offers", "all"):
        assert all(derived.derived_key(reads, g.id) == ledgered.derived_key(reads, g.id) for g in catalog.gpus)
    # Only the GPUs whose offers changed derive anything from their offers anew.
    touched = {offer.gpu for offer in [*changed, added]} | {o.gpu for o in catalog.offers if o.id in deleted}
    moved = {
        g.id for g in catalog.gpus if derived.derived_key("gpu_offers", g.id) != catalog.derived_key("gpu_offers", g.id)
    }
    assert moved == touched
    assert derived.derived_key("structure") == catalog.derived_key("structure") != derived.derived_key("all")
    # Removing what was added gives the first digest back: the sum is a difference writers can add.
    without_added = whole(catalog, [offer for offer in expected.offers if offer.id != added.id])
    assert (derived.offers_digest + offers_delta([], [added])) % DIGEST_MODULUS == without_added.offers_digest
    assert 0 <= derived.offers_digest < DIGEST_MODULUS


def test_an_offer_the_other_tables_do_not_know_is_refused(catalog: Catalog) -> None:
    nowhere = msgspec.structs.replace(catalog.offers[0], id="nowhere", provider="no-such-provider")
    with pytest.raises(CatalogError, match="unknown provider 'no-such-provider'"):
        catalog.with_offers([nowhere])
    twice = msgspec.structs.replace(catalog.offers[0], usd_per_gpu_hour=1.0)
    with pytest.raises(CatalogError, match="duplicate id"):
        catalog.with_offers([twice, twice])


def test_the_view_of_a_price_change_equals_the_view_built_whole(catalog: Catalog) -> None:
    cheapest = min(catalog.offers, key=lambda offer: offer.usd_per_gpu_hour)
    # A new lowest price for one GPU; every other GPU keeps its wire object.
    cheaper = msgspec.structs.replace(cheapest, usd_per_gpu_hour=round(cheapest.usd_per_gpu_hour / 2, 4))
    now = datetime.now(UTC)
    before = CatalogView(catalog, source="database", loaded_at=now)
    changed = catalog.with_offers([cheaper])

    incremental = CatalogView(changed, source="database", loaded_at=now, previous=before)
    full = CatalogView(changed, source="database", loaded_at=now)

    for name in ("gpus", "systems", "providers", "models"):
        assert getattr(incremental, name) == getattr(full, name), name
    assert incremental.gpus[cheapest.gpu] != before.gpus[cheapest.gpu]
    assert all(incremental.gpus[gpu] is before.gpus[gpu] for gpu in before.gpus if gpu != cheapest.gpu)
