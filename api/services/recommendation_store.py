"""Saved recommendations: group-committed by one writer task, held in memory and retried while the database is down."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import msgspec
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker

from api.adapters.storage.database import DATABASE_ERRORS, refused_data, sqlite_file_engine
from api.adapters.storage.recommendation_repository import (
    deflated,
    load_recommendation,
    save_recommendations,
    save_recommendations_blocking,
    save_recommendations_postgresql,
)
from api.metrics import PENDING_RECOMMENDATIONS, REFUSED_RECOMMENDATIONS
from api.services.background import cancel_requested, stop_tasks
from api.services.recommendation_spool import Spool, Spooled
from domain.planning import RecommendationRequest
from domain.workloads.results import Recommendation

log = logging.getLogger(__name__)

# "existing": that id was stored before (same request, same catalog, same day); the stored answer stands.
SaveOutcome = Literal["stored", "existing", "pending", "not_stored"]
StoreHealth = Literal["ok", "pending", "stalled"]
# A queue that has not shrunk for this many retry periods is reported as stalled.
STALL_RETRIES = 10
# Most recommendations one transaction of the writer holds.
MAX_BATCH = 256


@dataclass(frozen=True, slots=True)
class SavedRecommendation:
    """One recommendation as it is stored."""

    id: str
    catalog_version: str
    request: dict[str, Any]
    response: Any  # the document, or its encoding as msgspec.Raw
    created_at: datetime


def saved_recommendation(result: Recommendation, request: RecommendationRequest, body: bytes) -> SavedRecommendation:
    """A computed recommendation as it is stored: the normalised request and the encoded answer as sent."""
    return SavedRecommendation(
        id=result.id,
        catalog_version=result.catalog_version,
        request=msgspec.to_builtins(request),
        # The encoded answer goes into the JSON column as it is, not decoded and encoded again.
        response=msgspec.Raw(body),
        created_at=datetime.fromisoformat(result.created_at),
    )


class RecommendationStore:
    """Stores recommendations; what the database cannot take now waits here (bounded) and is retried in order."""

    # Every save waits for the commit that holds its recommendation, so "stored" still means committed; one writer task
    # commits whatever arrived meanwhile in one transaction (group commit), so concurrent requests do not queue for the
    # database's write lock one by one.

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        *,
        retry_s: float,
        capacity: int,
        spool: Path | None = None,
    ) -> None:
        self._sessions = sessions
        engine = sessions.kw.get("bind")
        # SQLite: each batch is deflated and committed in one call to a thread of the writer's own (one hop back to
        # the event loop per commit); elsewhere it is deflated there and sent as one autocommitted statement.
        self._blocking = sqlite_file_engine(engine) if isinstance(engine, AsyncEngine) else None
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="recommendation-writer")
        self._autocommit = (
            engine.execution_options(isolation_level="AUTOCOMMIT")
            if isinstance(engine, AsyncEngine) and self._blocking is None and engine.dialect.name == "postgresql"
            else None
        )
        # PostgreSQL: the writer keeps one connection (no pool checkout, ping and reset per batch); the lock keeps the
        # writer and a flush from sharing it at once.
        self._held: AsyncConnection | None = None
        self._held_lock = asyncio.Lock()
        # What still waits at shutdown is written there and taken up again by the next start.
        self._spool = Spool(spool) if spool is not None else None
        self._retry_s = retry_s
        self._capacity = capacity
        self._pending: OrderedDict[str, SavedRecommendation] = OrderedDict()
        self._flush_lock = asyncio.Lock()
        self._tasks: list[asyncio.Task[None]] = []
        # Saves waiting for the writer, and the batch it is committing now.
        self._queue: list[tuple[SavedRecommendation, asyncio.Future[SaveOutcome]]] = []
        self._writing: list[tuple[SavedRecommendation, asyncio.Future[SaveOutcome]]] = []
        self._wake = asyncio.Event()
        # When the queue last had nothing waiting or last shrank; None while it is empty.
        self._waiting_since: float | None = None
        self._stall_s = STALL_RETRIES * retry_s

    @property
    def pending(self) -> int:
        return len(self._pending)

    def health(self) -> StoreHealth:
        """`pending` while the queue drains or waits briefly; `stalled` when it has not shrunk for a while."""
        if not self._pending or self._waiting_since is None:
            return "ok"
        return "stalled" if time.monotonic() - self._waiting_since > self._stall_s else "pending"

    async def save(self, item: SavedRecommendation) -> SaveOutcome:
        """Store now (committed when this returns "stored"), or queue for a retry; `not_stored` when that cannot be."""
        if self._pending:
            # The database is known to be unavailable: keep the order, do not pay a failed attempt per request.
            return (await self._hold_all([item]))[0]
        if not self._tasks:
            return (await self._write_batch([item]))[0]
        future: asyncio.Future[SaveOutcome] = asyncio.get_running_loop().create_future()
        self._queue.append((item, future))
        self._wake.set()
        # A client that goes away must not cancel the commit other requests share.
        return await asyncio.shield(future)

    def waiting(self, recommendation_id: str) -> bool:
        """Whether the recommendation waits for the database (journaled, not yet acknowledged by it)."""
        return recommendation_id in self._pending

    async def load(self, recommendation_id: str) -> Any:
        """The stored document, or one still waiting; raises a database error when it cannot tell."""
        waiting = self._pending.get(recommendation_id)
        if waiting is not None:
            return waiting.response
        async with self._sessions() as session:
            return await load_recommendation(session, recommendation_id)

    async def flush(self) -> int:
        """Write what is waiting, oldest first, until the database is unreachable; the number written."""
        # An item the database refuses as data is dropped (and counted): one bad item must not hold up the rest.
        written = 0
        async with self._flush_lock:
            while self._pending:
                batch = list(self._pending.values())[:MAX_BATCH]
                try:
                    await self._insert(batch)
                except DATABASE_ERRORS as error:
                    if cancel_requested():
                        raise asyncio.CancelledError from error
                    if not refused_data(error):
                        log.debug("database still unavailable, %d recommendations waiting: %s", self.pending, error)
                        break
                    # Find the bad ones one by one; the others go in.
                    outcomes = [await self._write_one(item) for item in batch]
                    if "pending" in outcomes:
                        break
                    written += len(batch) - outcomes.count("not_stored")
                else:
                    written += len(batch)
                for item in batch:
                    del self._pending[item.id]
                self._waiting_since = time.monotonic() if self._pending else None
            PENDING_RECOMMENDATIONS.set(self.pending)
        if written:
            log.info("stored %d recommendations that waited for the database", written)
        if not self._pending and self._spool is not None:
            # Everything journaled, and everything the last run left behind, is stored now.
            self._spool.discard_journal()
            self._spool.release()
        return written

    def start(self) -> None:
        """Take up what the last run spooled, then write and retry in the background."""
        if self._spool is not None:
            for entry in self._spool.claim():
                self._pending.setdefault(entry.id, _unspooled(entry))
            if self._pending:
                self._waiting_since = time.monotonic()
                PENDING_RECOMMENDATIONS.set(self.pending)
                log.info("%d recommendations from the spool wait to be stored", self.pending)
        if not self._tasks:
            self._tasks = [
                asyncio.create_task(self._writer(), name="recommendation-store-writer"),
                asyncio.create_task(self._retry_forever(), name="recommendation-store-retry"),
            ]

    async def close(self) -> None:
        """Stop after a last attempt; what still waits goes to the spool (or is named in the log)."""
        await stop_tasks(self._tasks, "recommendation store")
        self._tasks = []
        # Saves the writer had not taken (or was cancelled in) are retried like any other.
        for item, future in [*self._writing, *self._queue]:
            outcome = self._hold(item)
            if not future.done():
                future.set_result(outcome)
        self._writing, self._queue = [], []
        await self.flush()
        await self._drop_held()
        self._close_thread()
        if not self._pending:
            return
        if self._spool is None:
            log.error("shutting down with %d recommendations not stored: %s", self.pending, ", ".join(self._pending))
            return
        try:
            count = self._spool.write(_spooled(item) for item in self._pending.values())
        except OSError as error:
            log.error("could not spool %d recommendations (%s): %s", self.pending, error, ", ".join(self._pending))
            return
        log.warning("spooled %d recommendations not yet stored to %s for the next start", count, self._spool.folder)

    def _close_thread(self) -> None:
        self._thread.shutdown(wait=True)
        # A fresh one starts no thread until used: a store used after close still writes.
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="recommendation-writer")
        if self._blocking is not None:
            self._blocking.dispose()

    def _hold(self, item: SavedRecommendation) -> SaveOutcome:
        if item.id in self._pending:
            return "pending"
        if len(self._pending) >= self._capacity:
            # Saying so beats dropping an older one the client was already told would be stored.
            log.error("recommendation %s not stored: %d already waiting for the database", item.id, self.pending)
            return "not_stored"
        if not self._pending:
            self._waiting_since = time.monotonic()
        self._pending[item.id] = item
        PENDING_RECOMMENDATIONS.set(self.pending)
        return "pending"

    async def _hold_all(self, items: list[SavedRecommendation]) -> list[SaveOutcome]:
        """Hold the items for a retry; the new ones are journaled (fsync) before any of them is answered."""
        new = {item.id for item in items} - self._pending.keys()
        outcomes = [self._hold(item) for item in items]
        held = list({item.id: item for item in items if item.id in new and item.id in self._pending}.values())
        if held and self._spool is not None:
            spool = self._spool
            try:
                await asyncio.to_thread(spool.append, [_spooled(item) for item in held])
            except OSError as error:
                # Still retried from memory, but a crash now would lose them: say which.
                ids = ", ".join(item.id for item in held)
                log.error("could not spool %d waiting recommendations (%s): %s", len(held), error, ids)
        return outcomes

    async def _writer(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._queue:
                self._writing, self._queue = self._queue[:MAX_BATCH], self._queue[MAX_BATCH:]
                outcomes = await self._write_batch([item for item, _ in self._writing])
                for (_, future), outcome in zip(self._writing, outcomes, strict=True):
                    if not future.done():
                        future.set_result(outcome)
                self._writing = []

    async def _write_batch(self, items: list[SavedRecommendation]) -> list[SaveOutcome]:
        """Commit the items in one transaction; on a refusal find the bad ones, on an outage queue them all."""
        if self._pending:
            return await self._hold_all(items)
        try:
            new = await self._insert(items)
            return ["stored" if item.id in new else "existing" for item in items]
        except DATABASE_ERRORS as error:
            if cancel_requested():
                raise asyncio.CancelledError from error
            if refused_data(error) and len(items) > 1:
                return [await self._write_one(item) for item in items]
            if refused_data(error):
                self._refused(items[0], error)
                return ["not_stored"]
            log.warning("could not store %d recommendations, queued for retry: %s", len(items), error)
            return await self._hold_all(items)

    async def _write_one(self, item: SavedRecommendation) -> SaveOutcome:
        try:
            return "stored" if item.id in await self._insert([item]) else "existing"
        except DATABASE_ERRORS as error:
            if cancel_requested():
                raise asyncio.CancelledError from error
            if refused_data(error):
                self._refused(item, error)
                return "not_stored"
            return (await self._hold_all([item]))[0]

    @staticmethod
    def _refused(item: SavedRecommendation, error: BaseException) -> None:
        REFUSED_RECOMMENDATIONS.inc()
        log.error("the database refused recommendation %s; not stored and not retried: %s", item.id, error)

    async def _retry_forever(self) -> None:
        while True:
            await asyncio.sleep(self._retry_s)
            if self._pending:
                await self.flush()

    async def _insert(self, items: list[SavedRecommendation]) -> set[str]:
        # Deflating releases the GIL: on the writer's thread it overlaps the requests the event loop serves.
        loop = asyncio.get_running_loop()
        if self._blocking is not None:
            return await loop.run_in_executor(self._thread, self._insert_blocking, items)
        rows = await loop.run_in_executor(self._thread, _rows, items)
        if self._autocommit is not None:
            return await self._insert_held(rows)
        async with self._sessions() as session, session.begin():
            return await save_recommendations(session, rows)

    async def _insert_held(self, rows: list[dict[str, Any]]) -> set[str]:
        """One autocommitted statement (committed when it returns) on the writer's own connection."""
        assert self._autocommit is not None
        async with self._held_lock:
            while True:
                fresh = self._held is None
                if self._held is None:
                    self._held = await self._autocommit.connect()
                try:
                    return await save_recommendations_postgresql(self._held, rows)
                except DATABASE_ERRORS as error:
                    if refused_data(error):
                        raise  # the connection is fine; the data is not
                    await self._drop_held()
                    if fresh:
                        raise
                    # A connection from before a restart fails once: try a new one, as a pool's pre-ping would.

    async def _drop_held(self) -> None:
        held, self._held = self._held, None
        if held is not None:
            with contextlib.suppress(*DATABASE_ERRORS):
                await held.invalidate()
            with contextlib.suppress(*DATABASE_ERRORS):
                await held.close()

    def _insert_blocking(self, items: list[SavedRecommendation]) -> set[str]:
        assert self._blocking is not None
        rows = _rows(items)
        with self._blocking.begin() as connection:
            return save_recommendations_blocking(connection, rows)


def _rows(items: list[SavedRecommendation]) -> list[dict[str, Any]]:
    return [
        {
            "id": item.id,
            "catalog_version": item.catalog_version,
            "request": item.request,
            "response": deflated(item.response),
            "created_at": item.created_at,
        }
        for item in items
    ]


def _spooled(item: SavedRecommendation) -> Spooled:
    response = item.response
    if not isinstance(response, msgspec.Raw):
        response = msgspec.Raw(msgspec.json.encode(response))
    return Spooled(
        id=item.id,
        catalog_version=item.catalog_version,
        request=item.request,
        response=response,
        created_at=item.created_at,
    )


def _unspooled(entry: Spooled) -> SavedRecommendation:
    return SavedRecommendation(
        id=entry.id,
        catalog_version=entry.catalog_version,
        request=entry.request,
        response=entry.response,
        created_at=entry.created_at,
    )
