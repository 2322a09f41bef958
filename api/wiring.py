"""The connections and the catalog snapshot one running instance holds; created in the app's lifespan."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import msgspec
from litestar import Request
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from api.adapters.cache import Cache, LocalCache, RedisCache, TieredCache
from api.adapters.redis_link import RedisLink
from api.adapters.storage.catalog_repository import load_catalog, load_changed_offers, stored_version
from api.adapters.storage.database import DATABASE_ERRORS, create_engine, create_session_factory, explain_database_error
from api.adapters.storage.offer_writer import OfferWriter
from api.adapters.storage.reference import load_reference_catalog
from api.http.rate_limit import RateLimiter
from api.metrics import CATALOG_INFO, CATALOG_RELOADS, PRICE_FEED_LAST_SYNC
from api.services.catalog_sync import CatalogSync
from api.services.catalog_view import CatalogView
from api.services.cluster_flight import CHANNEL as COMPUTED
from api.services.cluster_flight import ClusterFlight
from api.services.recommendation_store import RecommendationStore
from api.settings import Settings
from domain.catalog import Catalog, CatalogError, Offer
from domain.workloads.results import ExchangeRate

log = logging.getLogger(__name__)


class Services:
    """Engine, session factory, cache and the current catalog view of this instance."""

    def __init__(
        self, settings: Settings, engine: AsyncEngine, cache: Cache, view: CatalogView, link: RedisLink | None = None
    ) -> None:
        self.settings = settings
        self.engine = engine
        self.sessions: async_sessionmaker[AsyncSession] = create_session_factory(engine)
        self.cache = cache
        self.view = view
        self.recommendations = RecommendationStore(
            self.sessions,
            retry_s=settings.pending_retry_s,
            capacity=settings.pending_capacity,
            spool=Path(settings.pending_spool_dir) if settings.pending_spool_dir else None,
        )
        # Recommendations being computed and stored, by id: the same request meanwhile waits for that answer.
        self.computing: dict[str, asyncio.Future[Any]] = {}
        # With Redis: and while another instance computes it, this one waits for that answer too.
        self.flight = ClusterFlight(link) if link is not None else None
        # PostgreSQL: offer writes are coalesced on a thread of their own (see offer_writer.py).
        self.offer_writer = OfferWriter(settings.database_url) if engine.dialect.name == "postgresql" else None
        self.rate_limiter: RateLimiter | None = None
        self._reload_lock = asyncio.Lock()
        # Reloads asked for and answered, counted so that one reload answers every request made before it began.
        self._reloads_asked = self._reloads_answered = 0
        self.sync = CatalogSync(
            redis_url=settings.redis_url,
            poll_s=settings.catalog_poll_s,
            reload_interval_s=settings.catalog_reload_interval_s,
            timeout_s=settings.redis_timeout_s,
            stored_version=self.stored_version,
            # Serving the shipped reference data counts as no version: the database's catalog replaces it even
            # when the two are equal, so readiness stops reporting the fallback.
            current_version=lambda: self.view.version if self.view.source == "database" else "",
            reload=self.reload_catalog,
            share=self.shared_snapshot,
            adopt=self.adopt_snapshot,
            announcements={COMPUTED: self.flight.announced} if self.flight is not None else None,
        )

    @classmethod
    async def start(cls, settings: Settings) -> Services:
        """Open connections and load the catalog; an unreachable database still leaves reads working."""
        engine = create_engine(settings.database_url)
        cache: Cache
        link = None
        if settings.redis_url:
            link = RedisLink(
                settings.redis_url, timeout_s=settings.redis_timeout_s, retry_after_s=settings.redis_retry_after_s
            )
            cache = TieredCache(LocalCache(settings.local_cache_entries, backend="local-tier"), RedisCache(link))
        else:
            cache = LocalCache(settings.local_cache_entries)
        services = cls(settings, engine, cache, await _initial_view(engine, settings.database_url), link)
        if settings.rate_limit_per_minute > 0:
            services.rate_limiter = RateLimiter(settings.rate_limit_per_minute, settings.rate_limit_burst, link)
        _publish(services.view)
        services.sync.start()
        services.recommendations.start()
        if services.offer_writer is not None:
            services.offer_writer.start()
        return services

    @property
    def exchange_rate(self) -> ExchangeRate:
        """The USD to CNY rate from the settings."""
        return self.settings.exchange_rate()

    async def reload_catalog(self, change: Callable[[Catalog], Catalog] | None = None) -> CatalogView:
        """Replace the snapshot with what the database holds now, or with `change` applied to it (a change this
        instance just committed, served without reading the catalog back).

        Reloads asked for while one runs are one reload: a reload that read the database after a request was made
        answers it, so a burst of writes here and elsewhere costs this instance one or two reloads, not one each.
        """
        self._reloads_asked += 1
        ticket = self._reloads_asked
        async with self._reload_lock:
            if self._reloads_answered >= ticket:
                return self.view
            # What the database holds when it is read covers every request made before the read starts; a change
            # covers only itself. Another instance's changes this snapshot lacks come with the next reload (the
            # stored version differs from this one until then).
            answers = ticket if change is not None else self._reloads_asked
            # Off the event loop like every snapshot: an import's change may hold thousands of offers.
            catalog = await asyncio.to_thread(self._changed, change) if change is not None else None
            if catalog is None:
                async with self.sessions() as session:
                    if self.view.source == "database":
                        catalog = await load_changed_offers(session, self.view.catalog)
                    if catalog is None:
                        catalog = await load_catalog(session)
            if catalog is not None and (catalog.version != self.view.version or self.view.source != "database"):
                # Building the wire objects of a large catalog takes a while: not on the event loop.
                self.view = await asyncio.to_thread(
                    CatalogView, catalog, source="database", loaded_at=datetime.now(UTC), previous=self.view
                )
                _publish(self.view)
                log.info("catalog reloaded: version %s", self.view.version)
            self._reloads_answered = max(self._reloads_answered, answers)
        return self.view

    def _changed(self, change: Callable[[Catalog], Catalog]) -> Catalog | None:
        """The served snapshot with the change, or None when it cannot take it (it lacks a GPU the change names)."""
        if self.view.source != "database":
            return None
        try:
            return change(self.view.catalog)
        except CatalogError:
            return None

    def shared_snapshot(self) -> bytes | None:
        """The served version and offers, for the other instances of a tick; None when not the database's."""
        view = self.view
        return _SNAPSHOT_ENCODER.encode((view.version, view.catalog.offers)) if view.source == "database" else None

    async def adopt_snapshot(self, payload: bytes) -> bool:
        """Serve the snapshot another instance read for this tick (the database's when this one cannot build it,
        e.g. it lacks a change to the other tables); False for a payload that does not decode."""
        try:
            version, offers = _SNAPSHOT_DECODER.decode(payload)
        except msgspec.MsgspecError:
            return False
        await self.reload_catalog(partial(_with_offer_list, offers=offers, version=version))
        return True

    async def stored_version(self) -> str | None:
        """The version the database says is current."""
        async with asyncio.timeout(5.0), self.sessions() as session:
            return await stored_version(session)

    async def catalog_changed(self, version: str, change: Callable[[Catalog], Catalog] | None = None) -> None:
        """After a committed change to `version`: tell the other instances, serve it here (`change`: without reading
        it back) now, or with the other changes of this interval at its end."""
        self.sync.publish(version)
        await self.sync.reload_soon(partial(self.reload_catalog, change))

    async def database_ok(self) -> bool:
        """Whether the database answers a trivial query within the timeout."""
        try:
            async with asyncio.timeout(2.0), self.engine.connect() as connection:
                await connection.execute(text("SELECT 1"))
        except DATABASE_ERRORS as error:
            log.warning("database check failed: %s", error)
            return False
        return True

    async def close(self) -> None:
        if self.offer_writer is not None:
            await self.offer_writer.close()
        await self.sync.stop()
        if self.flight is not None:
            await self.flight.close()
        await self.recommendations.close()
        await self.cache.close()
        await self.engine.dispose()


async def _initial_view(engine: AsyncEngine, database_url: str) -> CatalogView:
    now = datetime.now(UTC)
    try:
        async with asyncio.timeout(10.0), create_session_factory(engine)() as session:
            catalog = await load_catalog(session)
        if catalog is not None:
            return CatalogView(catalog, source="database", loaded_at=now)
        log.warning("the database holds no catalog yet (run `gpu-advisor seed`); serving the reference data")
    except DATABASE_ERRORS as error:
        log.error("serving the reference data: %s", explain_database_error(error, database_url))
    except CatalogError as error:
        log.error("the stored catalog is invalid, serving the reference data: %s", error)
    return CatalogView(load_reference_catalog(), source="reference", loaded_at=now)


_SNAPSHOT_ENCODER = msgspec.msgpack.Encoder()
_SNAPSHOT_DECODER = msgspec.msgpack.Decoder(tuple[str, list[Offer]])


def _with_offer_list(catalog: Catalog, *, offers: list[Offer], version: str) -> Catalog:
    """`catalog` with exactly `offers`; CatalogError unless that makes `version` (the other tables differ)."""
    changed = catalog.with_offer_list(offers)
    if changed.version != version:
        raise CatalogError([f"the shared offers make version {changed.version}, not {version}"])
    return changed


def _publish(view: CatalogView) -> None:
    CATALOG_RELOADS.inc()
    CATALOG_INFO.clear()
    CATALOG_INFO.labels(view.version, view.source).set(1)
    for provider in view.catalog.providers:
        if provider.last_synced_at is not None:
            PRICE_FEED_LAST_SYNC.labels(provider.id, provider.feed or "").set(provider.last_synced_at.timestamp())


def services_of(request: Request[Any, Any, Any]) -> Services:
    """This instance's services off the app state: the hottest routes skip Litestar's dependency resolution."""
    services: Services = request.scope["app"].state.services
    return services
