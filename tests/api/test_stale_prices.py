"""Old prices are shown and flagged (their age only breaks ties); a user's own price replaces the catalog's."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from api.settings import Settings, SettingsError
from domain.catalog import Catalog
from domain.planning import RecommendationRequest, prepare, rank
from domain.workloads.results import ExchangeRate
from tests.conftest import with_offers

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
RATE = ExchangeRate(usd_to_cny=7.1, as_of=NOW.date(), source="test")
LLAMA_8B = {"kind": "inference", "model": "llama-3.1-8b", "concurrency": 8}


def aged(catalog: Catalog, as_of: date = date(2025, 6, 1)) -> Catalog:
    """The catalog with every offer dated long before NOW: the shipped prices are current, so age them here."""
    offers = [msgspec.structs.replace(offer, as_of=as_of) for offer in catalog.offers]
    return with_offers(catalog, offers)


def recommend(catalog: Catalog, body: dict[str, Any], max_age: int = 120) -> Any:
    request = msgspec.convert(body, RecommendationRequest)
    return rank(catalog, prepare(catalog, request, "en"), now=NOW, rate=RATE, price_max_age_days=max_age)


def test_options_priced_with_old_offers_say_so_and_requirements_count_them(reference: Catalog) -> None:
    old = aged(reference)
    answer = recommend(old, {"workload": LLAMA_8B})
    assert answer.options and all(o.cost.stale_price for o in answer.options if o.cost)
    assert all(o.cost.price_age_days > 120 for o in answer.options if o.cost)
    assert answer.requirements.stale_offers > 0
    fresh = recommend(old, {"workload": LLAMA_8B}, max_age=100_000)
    assert fresh.requirements.stale_offers == 0 and not any(o.cost.stale_price for o in fresh.options if o.cost)


def test_a_fresh_price_is_stated_and_ranked_by_the_objective_not_its_age(reference: Catalog) -> None:
    # L40S at the user's negotiated 5 USD is dearer than every (old) catalog price: being current does not lift it.
    answer = recommend(aged(reference), {"workload": LLAMA_8B, "constraints": {"prices": {"L40S": 5.0}}, "limit": 50})
    mine = next(o for o in answer.options if o.gpu.id == "l40s")
    assert mine.offer is not None and mine.offer.usd_per_gpu_hour == 5.0
    assert mine.cost is not None and not mine.cost.stale_price
    price = next(a for a in mine.assumptions if a.name == "price")
    assert "5 USD per GPU-hour for l40s" in price.value and price.source == "your price (constraints.prices)"
    met = [o.score for o in answer.options if o.meets_targets]
    assert met == sorted(met, reverse=True)


def test_a_user_price_makes_an_unrented_gpu_an_option(reference: Catalog) -> None:
    answer = recommend(reference, {"workload": LLAMA_8B, "constraints": {"gpus": ["gb300"], "prices": {"gb300": 7.5}}})
    assert [o.gpu.id for o in answer.options] == ["gb300"]
    assert answer.options[0].cost is not None and answer.options[0].cost.hourly == 7.5


async def test_an_unknown_gpu_in_prices_is_a_400(client: AsyncTestClient[Litestar]) -> None:
    body = {"workload": LLAMA_8B, "constraints": {"prices": {"h900": 2.0}}}
    response = await client.post("/v1/recommendations", json=body)
    assert response.status_code == 400 and "constraints.prices" in response.text
    negative = {"workload": LLAMA_8B, "constraints": {"prices": {"h100-sxm": -1}}}
    assert (await client.post("/v1/recommendations", json=negative)).status_code == 400


async def test_the_service_flags_old_prices(client: AsyncTestClient[Litestar]) -> None:
    response = await client.post("/v1/recommendations", json={"workload": LLAMA_8B})
    assert response.status_code == 200
    body = response.json()
    costs = [option["cost"] for option in body["options"] if option["cost"]]
    assert costs and all(cost["stale_price"] is (cost["price_age_days"] > 120) for cost in costs)
    # The shipped prices are current: a fresh install ranks a fresh price first.
    assert costs[0]["stale_price"] is False


def test_the_age_limit_is_a_setting() -> None:
    assert Settings.from_env({}).price_max_age_days == 120
    assert Settings.from_env({"GPU_ADVISOR_PRICE_MAX_AGE_DAYS": "30"}).price_max_age_days == 30
    with pytest.raises(SettingsError):
        Settings.from_env({"GPU_ADVISOR_PRICE_MAX_AGE_DAYS": "0"})
