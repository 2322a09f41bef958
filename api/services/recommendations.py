"""Recommendations: creating one (POST /v1/recommendations, the recommend_gpus tool, the CLI), reading a stored one."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any

import msgspec

from api.adapters.storage.database import DATABASE_ERRORS
from api.metrics import RECOMMENDATIONS_COMPUTED
from api.services.recommendation_store import SaveOutcome, saved_recommendation
from domain.catalog import Catalog
from domain.planning import PreparedRequest, RecommendationRequest, prepare, rank, recommendation_id
from domain.workloads.requests import Lang
from domain.workloads.results import ExchangeRate, Recommendation

if TYPE_CHECKING:
    from api.services.catalog_view import CatalogView
    from api.wiring import Services

log = logging.getLogger(__name__)

_encoder = msgspec.json.Encoder()
_COMPUTED_ALONE = RECOMMENDATIONS_COMPUTED.labels("alone")


def rank_request(
    catalog: Catalog,
    request: RecommendationRequest,
    lang: Lang,
    *,
    now: datetime,
    rate: ExchangeRate,
    price_max_age_days: int | None = None,
) -> tuple[PreparedRequest, Recommendation]:
    """A request normalised (defaults filled, names checked) and ranked; the domain's price age limit by default."""
    prepared = prepare(catalog, request, lang)
    limits = {} if price_max_age_days is None else {"price_max_age_days": price_max_age_days}
    return prepared, rank(catalog, prepared, now=now, rate=rate, **limits)


@dataclass(frozen=True, slots=True)
class CreatedRecommendation:
    """A recommendation as the service answers it: its id, the encoded body, and how storing it went."""

    id: str
    body: bytes
    # None when the answer came from the cache (it was stored when it was computed).
    outcome: SaveOutcome | None


async def create_recommendation(
    services: Services, request: RecommendationRequest, lang: Lang, now: datetime
) -> CreatedRecommendation:
    """Answer from the cache when this request on this catalog was answered today; else rank, store and cache it."""
    view = services.view
    prepared = prepare(view.catalog, request, lang)
    rate = services.exchange_rate
    rate_used = rate if prepared.request.currency == "CNY" else None
    rec_id = recommendation_id(prepared.request, view.version, rate_used, now.date())
    body = await services.cache.get(f"rec:{rec_id}")
    if body is not None:
        return CreatedRecommendation(rec_id, body, None)
    # The same request while this instance computes and stores it (a new snapshot makes every repeated request a
    # miss at once): one computation and one write, whose answer every one of them gets.
    computing = services.computing
    while (first := computing.get(rec_id)) is not None:
        try:
            return await asyncio.shield(first)
        except asyncio.CancelledError:
            if not first.cancelled():
                raise  # this request's own cancellation; else the first one failed: the next of them computes it
    future: asyncio.Future[CreatedRecommendation] = asyncio.get_running_loop().create_future()
    computing[rec_id] = future
    try:
        created = await _compute_once(services, prepared, view, rate, rec_id, now)
    except BaseException:
        future.cancel()  # the next of the others computes it
        raise
    finally:
        if computing.get(rec_id) is future:
            del computing[rec_id]
    future.set_result(created)
    return created


async def _compute_once(
    services: Services, prepared: PreparedRequest, view: CatalogView, rate: ExchangeRate, rec_id: str, now: datetime
) -> CreatedRecommendation:
    """Computed here, or by the other instance that claimed it first (api/services/cluster_flight.py)."""
    compute = partial(_compute, services, prepared, view, rate, rec_id, now)
    if services.flight is None:
        _COMPUTED_ALONE.inc()
        return await compute()

    async def cached() -> CreatedRecommendation | None:
        body = await services.cache.get(f"rec:{rec_id}")
        return CreatedRecommendation(rec_id, body, None) if body is not None else None

    return await services.flight.once(f"rec:{rec_id}", cached, compute)


async def _compute(
    services: Services, prepared: PreparedRequest, view: CatalogView, rate: ExchangeRate, rec_id: str, now: datetime
) -> CreatedRecommendation:
    # Computed first and looked up only when the id turns out to be stored already: a new id (the common case on a
    # miss) costs one write and no read.
    result = rank(view.catalog, prepared, now=now, rate=rate, price_max_age_days=services.settings.price_max_age_days)
    body = _encoder.encode(result)
    outcome = await services.recommendations.save(saved_recommendation(result, prepared.request, body))
    if outcome == "existing":
        stored = await _find(services, rec_id)
        if stored is not None:
            body = _encoder.encode(stored)
    if outcome in ("stored", "existing"):
        # Only what the database acknowledged is cached: a cached id outlives this process, a waiting one may not.
        await services.cache.set(f"rec:{rec_id}", body, services.settings.cache_ttl_s)
    return CreatedRecommendation(rec_id, body, outcome)


class StoreUnavailable(Exception):
    """The stored recommendations cannot be read right now (the database is down)."""


async def stored_recommendation(services: Services, recommendation_id: str) -> bytes | None:
    """A stored recommendation as it was answered (from the cache, else the database, then cached); None if unknown."""
    body = await services.cache.get(f"rec:{recommendation_id}")
    if body is not None:
        return body
    try:
        stored = await services.recommendations.load(recommendation_id)
    except DATABASE_ERRORS as error:
        log.warning("could not read recommendation %s: %s", recommendation_id, error)
        raise StoreUnavailable from None
    if stored is None:
        return None
    body = _encoder.encode(stored)
    if not services.recommendations.waiting(recommendation_id):
        await services.cache.set(f"rec:{recommendation_id}", body, services.settings.cache_ttl_s)
    return body


async def keep_recommendation(services: Services, result: Recommendation, request: RecommendationRequest) -> None:
    """Store a recommendation computed elsewhere (a chatbot tool call) so its id can be shared."""
    await services.recommendations.save(saved_recommendation(result, request, _encoder.encode(result)))


async def _find(services: Services, rec_id: str) -> Any:
    try:
        return await services.recommendations.load(rec_id)
    except DATABASE_ERRORS as error:
        log.warning("could not look up recommendation %s: %s", rec_id, error)
        return None
