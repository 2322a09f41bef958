"""An old price is information, not a penalty: the objective ranks, the age is a warning and a sentence."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec

from domain.catalog import Catalog
from domain.planning import RecommendationRequest, prepare, rank
from domain.workloads.results import ExchangeRate

NOW = datetime(2026, 12, 3, 12, tzinfo=UTC)
RATE = ExchangeRate(usd_to_cny=7.1, as_of=NOW.date(), source="test")
OLD = NOW.date() - timedelta(days=190)
FINE_TUNE = {"kind": "fine_tuning", "model": "llama-3.1-8b", "method": "lora", "train_tokens": 200_000_000}
SERVE = {"kind": "inference", "model": "llama-3.1-8b", "concurrency": 8}


def dated(catalog: Catalog, fresh: set[str] = frozenset()) -> Catalog:  # type: ignore[assignment]
    """The catalog with every offer 190 days old except the `fresh` ones, seen today."""
    offers = [msgspec.structs.replace(o, as_of=NOW.date() if o.id in fresh else OLD) for o in catalog.offers]
    return Catalog(
        gpus=catalog.gpus, systems=catalog.systems, providers=catalog.providers, offers=offers, models=catalog.models
    )


def recommend(catalog: Catalog, body: dict[str, Any], lang: str = "en") -> Any:
    request = msgspec.convert(body, RecommendationRequest)
    return rank(catalog, prepare(catalog, request, lang), now=NOW, rate=RATE, price_max_age_days=120)


def need(option: Any) -> float:
    cost = option.cost
    return cost.per_run if cost.per_run is not None else cost.hourly


def test_under_cost_no_cheaper_stale_option_ranks_below_a_fresh_dearer_one(reference: Catalog) -> None:
    for workload in (FINE_TUNE, SERVE):
        body = {"workload": workload, "objective": "cost", "limit": 10}
        everything_old = recommend(dated(reference), body)
        priced = [o for o in everything_old.options if o.cost is not None and o.offer is not None]
        dearest = max(priced, key=need)
        # An administrator refreshes the dearest offer only (the 121.80 USD fine-tuning run).
        answer = recommend(dated(reference, {dearest.offer.offer_id}), body)
        options = [o for o in answer.options if o.cost is not None]
        assert any(not o.cost.stale_price for o in options) and any(o.cost.stale_price for o in options)
        for position, fresh in enumerate(options):
            if fresh.cost.stale_price:
                continue
            for later in options[position + 1 :]:
                assert not (later.cost.stale_price and need(later) < need(fresh)), (
                    f"{later.gpu.id} at {need(later)} (old price) ranks below {fresh.gpu.id} at {need(fresh)}"
                )


def test_an_old_price_is_a_warning_and_a_sentence_in_the_summary(reference: Catalog) -> None:
    for lang, sentence in (("en", "priced with a 190-day-old offer"), ("zh", "190 天前的报价")):
        answer = recommend(dated(reference), {"workload": SERVE}, lang)
        best = answer.options[0]
        assert best.cost is not None and best.cost.stale_price and best.cost.price_age_days == 190
        assert sentence in answer.summary, answer.summary
        assert any("190" in warning for warning in best.warnings)
    everything_fresh = recommend(dated(reference, {o.id for o in reference.offers}), {"workload": SERVE})
    assert "day-old offer" not in everything_fresh.summary


async def test_every_chat_tool_summary_says_a_price_is_old(reference: Catalog) -> None:
    from api.chat.tools import ToolContext, call_tool
    from api.services.catalog_view import CatalogView

    for lang, old in (("en", ("190-day-old", "190 days old")), ("zh", ("190 天",))):
        context = ToolContext(view=CatalogView(dated(reference), source="reference", loaded_at=NOW), rate=RATE, now=NOW)
        calls = {
            "recommend_gpus": {"workload": SERVE},
            "estimate_workload": {"workload": SERVE, "gpu": "h100-sxm", "gpu_count": 1},
            "find_gpu_prices": {"gpu": "H100", "pricing": "on_demand", "limit": 3},
            "rent_or_buy": {"gpu": "h100-sxm", "gpu_count": 8},
        }
        for name, arguments in calls.items():
            answer = await call_tool(name, arguments | {"lang": lang}, context)
            assert any(words in answer.summary for words in old), (name, answer.summary)
