"""Offer writes on PostgreSQL: coalesced into one transaction per turn, run on a thread and event loop of their own.

Every instance's catalog writes queue on one advisory lock, so the time a transaction holds it is the price of each
write for the whole cluster. On the request loop every statement of that transaction also waited behind whatever
the loop was running (hundreds of requests under load), so the lock was held for the loop's turns, not for database
time. Here the transaction runs on a loop that does nothing else, and every change that arrived meanwhile joins it:
one lock, one catalog computation and one version per batch.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future

import asyncpg
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from api.adapters.storage.database import DATABASE_ERRORS, create_engine, create_session_factory
from api.adapters.storage.offer_repository import OfferChange, WriteReport, write_batch, write_offer_batch
from api.adapters.storage.offer_statements import ConnectionTables, NeedsSession
from domain.catalog import Catalog, CatalogError

log = logging.getLogger(__name__)

# Most clients' changes one transaction holds.
MAX_BATCH = 64
_Job = tuple[OfferChange, Catalog | None, asyncio.Future[WriteReport]]


class OfferWriter:
    """A thread with its own event loop and connection pool that commits queued offer changes in batches."""

    def __init__(self, database_url: str) -> None:
        self._url = database_url
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._engine: AsyncEngine | None = None
        # asyncpg's own form of the URL, for the connection the batches run on (the engine takes what it leaves).
        self._dsn = make_url(database_url).set(drivername="postgresql").render_as_string(hide_password=False)
        self._connection: asyncpg.Connection | None = None
        self._sessions: async_sessionmaker[AsyncSession] | None = None
        self._queue: list[_Job] = []
        self._wake: asyncio.Event | None = None
        # Set while nothing is queued or committing.
        self._idle: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start the thread; it owns its engine (asyncpg connections belong to the loop that opened them)."""
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            self._loop = loop
            self._engine = create_engine(self._url)
            self._sessions = create_session_factory(self._engine)
            self._wake = asyncio.Event()
            self._idle = asyncio.Event()
            self._idle.set()
            self._task = loop.create_task(self._drain(), name="offer-writer")
            ready.set()
            try:
                loop.run_forever()
            finally:
                if self._connection is not None:
                    loop.run_until_complete(self._connection.close(timeout=5.0))
                loop.run_until_complete(self._engine.dispose())
                loop.close()

        self._thread = threading.Thread(target=run, name="offer-writer", daemon=True)
        self._thread.start()
        ready.wait()

    async def write(self, change: OfferChange, current: Catalog | None) -> WriteReport:
        """Commit the change (with whatever else is queued); raises what the transaction raised for it."""
        assert self._loop is not None
        future: Future[WriteReport] = asyncio.run_coroutine_threadsafe(self._submit(change, current), self._loop)
        # A client that goes away must not cancel a commit other clients share.
        return await asyncio.shield(asyncio.wrap_future(future))

    async def close(self) -> None:
        """Finish what is queued, then stop the thread."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        asyncio.run_coroutine_threadsafe(self._stop(), loop).result(timeout=30)
        loop.call_soon_threadsafe(loop.stop)
        await asyncio.to_thread(thread.join, 30)
        self._loop = self._thread = None

    async def _stop(self) -> None:
        assert self._idle is not None
        await self._idle.wait()
        if self._task is not None:
            self._task.cancel()

    async def _submit(self, change: OfferChange, current: Catalog | None) -> WriteReport:
        assert self._wake is not None and self._idle is not None
        future: asyncio.Future[WriteReport] = asyncio.get_running_loop().create_future()
        self._queue.append((change, current, future))
        self._idle.clear()
        self._wake.set()
        return await future

    async def _drain(self) -> None:
        assert self._wake is not None and self._idle is not None
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._queue:
                batch, self._queue = self._queue[:MAX_BATCH], self._queue[MAX_BATCH:]
                await self._commit(batch)
            self._idle.set()

    async def _commit(self, batch: Sequence[_Job]) -> None:
        started = time.perf_counter()
        try:
            reports = await self._transaction(batch)
        except (CatalogError, *DATABASE_ERRORS) as error:
            if len(batch) == 1:
                _settle(batch[0][2], error=error)
                return
            # One change the catalog or the database refuses must not fail the others: each alone, as it came.
            log.info("a batch of %d offer changes failed (%s); committing them one by one", len(batch), error)
            for job in batch:
                await self._commit([job])
            return
        except Exception as error:  # anything else: each client gets it, and the writer goes on with the next batch
            log.exception("a batch of %d offer changes failed", len(batch))
            for _, _, future in batch:
                _settle(future, error=error)
            return
        except BaseException as error:
            for _, _, future in batch:
                _settle(future, error=error)
            raise
        log.debug("committed %d offer changes in %.0f ms", len(batch), (time.perf_counter() - started) * 1000)
        for (_, _, future), report in zip(batch, reports, strict=True):
            _settle(future, report=report)

    async def _transaction(self, batch: Sequence[_Job]) -> list[WriteReport]:
        assert self._sessions is not None
        # The newest snapshot any client had: the closest to what is stored.
        current = batch[-1][1]
        changes = [change for change, _, _ in batch]
        try:
            return await self._on_connection(changes, current)
        except NeedsSession:
            async with self._sessions() as session, session.begin():
                return await write_offer_batch(session, changes, current=current)

    async def _on_connection(self, changes: list[OfferChange], current: Catalog | None) -> list[WriteReport]:
        """The batch on the writer's own connection; one opened anew when the kept one turns out to be closed."""
        for attempt in range(2):
            connection = self._connection or await asyncpg.connect(self._dsn, timeout=5.0, command_timeout=30.0)
            self._connection = connection
            began = False
            try:
                async with connection.transaction():
                    began = True
                    return await write_batch(ConnectionTables(connection), changes, current=current)
            except Exception:
                if not connection.is_closed():
                    raise  # the database's answer to the batch, whose transaction was rolled back
                self._connection = None
                # A connection the database closed while it was idle (a restart, an administrator) fails at BEGIN,
                # before anything was sent: one new connection may take the batch. Anything later is an answer.
                if began or attempt:
                    raise
        raise AssertionError("unreachable")


def _settle(
    future: asyncio.Future[WriteReport], *, report: WriteReport | None = None, error: BaseException | None = None
) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        assert report is not None
        future.set_result(report)
