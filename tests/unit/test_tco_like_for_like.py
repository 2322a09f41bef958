"""Rent or buy like for like: an 8-GPU NVLink server against 8-GPU instances, the purchase price dated."""

from __future__ import annotations

from datetime import date
from typing import Any

import msgspec

from domain.catalog import Catalog, Offer
from domain.pricing.tco import tco
from domain.pricing.tco_schema import TcoRead, TcoRequest
from domain.workloads.results import ExchangeRate
from tests.conftest import with_offers

TODAY = date(2026, 12, 3)
RATE = ExchangeRate(usd_to_cny=7.10, as_of=TODAY, source="test rate")


def offer(offer_id: str, size: int, pricing: str, usd: float) -> Offer:
    return msgspec.convert(
        {
            "id": offer_id,
            "provider": "runpod" if size == 1 else "lambda",
            "gpu": "h100-sxm",
            "gpus_per_instance": size,
            "pricing": pricing,
            "usd_per_gpu_hour": usd,
            "as_of": "2026-11-20",
            "source": "test offer",
        },
        Offer,
    )


def with_h100_offers(catalog: Catalog, offers: list[Offer]) -> Catalog:
    """The catalog with these H100 SXM offers in place of its own."""
    kept = [o for o in catalog.offers if o.gpu != "h100-sxm"]
    return with_offers(catalog, kept + offers)


def run(catalog: Catalog, **body: Any) -> TcoRead:
    return tco(catalog, msgspec.convert(body, TcoRequest), today=TODAY, lang="en", rate=RATE)


def test_an_8_gpu_server_is_compared_with_8_gpu_instances_where_any_exist(reference: Catalog) -> None:
    # Eight 1-GPU pods are cheaper per GPU, but they are not one NVLink server.
    catalog = with_h100_offers(
        reference,
        [
            offer("pods-on-demand", 1, "on_demand", 2.0),
            offer("servers-on-demand", 8, "on_demand", 3.0),
            offer("pods-spot", 1, "spot", 1.2),
        ],
    )
    result = run(catalog, gpu="h100-sxm", gpu_count=8, pricing=["on_demand", "spot"])
    by_pricing = {option.pricing: option for option in result.rent}
    on_demand, spot = by_pricing["on_demand"], by_pricing["spot"]
    assert (on_demand.offer_id, on_demand.gpus_per_instance, on_demand.instances) == ("servers-on-demand", 8, 1)
    assert on_demand.like_for_like
    # No 8-GPU spot offer: 1-GPU pods are rented and the answer says the shapes differ.
    assert (spot.offer_id, spot.gpus_per_instance, spot.like_for_like) == ("pods-spot", 1, False)
    assert any("instances of 8 GPUs" in warning and "spot" in warning for warning in result.warnings)
    assert not any("on demand" in w and "instances of 8 GPUs" in w for w in result.warnings)
    rent_offer = next(a for a in result.assumptions if a.name == "rent_offer")
    assert "like for like" in rent_offer.value and "8 GPUs" in rent_offer.value


def test_the_purchase_price_is_dated_and_a_quote_replaces_it(reference: Catalog) -> None:
    catalog_price = run(reference, gpu="h100-sxm", gpu_count=8)
    system = next(s for s in reference.systems if s.id == catalog_price.system)
    assert system.price is not None
    assert catalog_price.buy.purchase_as_of == system.price.as_of
    assert catalog_price.buy.purchase_age_days == (TODAY - system.price.as_of).days
    assert system.price.source in catalog_price.buy.purchase_source
    quoted = run(reference, gpu="h100-sxm", gpu_count=8, purchase_usd=250_000)
    assert quoted.buy.purchase == 250_000 and quoted.buy.purchase_as_of is None
    assert "purchase_usd" in quoted.buy.purchase_source
