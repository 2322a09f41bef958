"""Saved recommendations: written through to the database, held in memory and retried while it is down."""

from __future__ import annotations

import asyncio
import logging
import os
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import msgspec
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from api.background import cancel_requested, stop_tasks
from api.metrics import PENDING_RECOMMENDATIONS, REFUSED_RECOMMENDATIONS
from api.storage.database import DATABASE_ERRORS, refused_data
from api.storage.recommendation_repository import load_recommendation, save_recommendation
from domain.estimates import Recommendation
from domain.ranking import RecommendationRequest

log = logging.getLogger(__name__)

SaveOutcome = Literal["stored", "pending", "not_stored"]
StoreHealth = Literal["ok", "pending", "stalled"]
# A queue that has not shrunk for this many retry periods is reported as stalled.
STALL_RETRIES = 10


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


class _Spooled(msgspec.Struct, frozen=True):
    """One waiting recommendation as the spool file holds it (one JSON document a line)."""

    id: str
    catalog_version: str
    request: dict[str, Any]
    response: msgspec.Raw
    created_at: datetime


def _spooled(item: SavedRecommendation) -> _Spooled:
    response = (
        item.response if isinstance(item.response, msgspec.Raw) else msgspec.Raw(msgspec.json.encode(item.response))
    )
    return _Spooled(
        id=item.id,
        catalog_version=item.catalog_version,
        request=item.request,
        response=response,
        created_at=item.created_at,
    )


def _unspooled(entry: _Spooled) -> SavedRecommendation:
    return SavedRecommendation(
        id=entry.id,
        catalog_version=entry.catalog_version,
        request=entry.request,
        response=entry.response,
        created_at=entry.created_at,
    )


class RecommendationStore:
    """Stores recommendations; what the database cannot take now waits here (bounded) and is retried in order."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        *,
        retry_s: float,
        capacity: int,
        spool: Path | None = None,
    ) -> None:
        self._sessions = sessions
        # A folder: what still waits at shutdown is written there and taken up again by the next start.
        self._spool = spool
        self._claimed: list[Path] = []
        self._retry_s = retry_s
        self._capacity = capacity
        self._pending: OrderedDict[str, SavedRecommendation] = OrderedDict()
        self._flush_lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None
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
        """Store now, or queue for a retry; `not_stored` only when the queue is full."""
        if not self._pending:
            try:
                await self._write(item)
                return "stored"
            except DATABASE_ERRORS as error:
                if refused_data(error):
                    self._refused(item, error)
                    return "not_stored"
                log.warning("could not store recommendation %s, queued for retry: %s", item.id, error)
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

    async def load(self, recommendation_id: str) -> Any:
        """The stored document, or one still waiting; raises a database error when it cannot tell."""
        waiting = self._pending.get(recommendation_id)
        if waiting is not None:
            return waiting.response
        async with self._sessions() as session:
            return await load_recommendation(session, recommendation_id)

    async def flush(self) -> int:
        """Write what is waiting, oldest first, until the database is unreachable; the number written.

        An item the database refuses as data is dropped (and counted): one bad item must not hold up the rest.
        """
        written = 0
        async with self._flush_lock:
            while self._pending:
                item = next(iter(self._pending.values()))
                try:
                    await self._write(item)
                except DATABASE_ERRORS as error:
                    if cancel_requested():
                        raise asyncio.CancelledError from error
                    if not refused_data(error):
                        log.debug("database still unavailable, %d recommendations waiting: %s", self.pending, error)
                        break
                    self._refused(item, error)
                else:
                    written += 1
                del self._pending[item.id]
                self._waiting_since = time.monotonic() if self._pending else None
            PENDING_RECOMMENDATIONS.set(self.pending)
        if written:
            log.info("stored %d recommendations that waited for the database", written)
        if not self._pending and self._claimed:
            # Everything the last run left behind is stored now.
            self._release_claimed()
        return written

    def start(self) -> None:
        """Take up what the last run spooled, then retry in the background."""
        self._load_spool()
        if self._task is None:
            self._task = asyncio.create_task(self._retry_forever(), name="recommendation-store-retry")

    async def close(self) -> None:
        """Stop retrying after a last attempt; anything still waiting is named in the log."""
        if self._task is not None:
            await stop_tasks([self._task], "recommendation store")
            self._task = None
        await self.flush()
        if self._pending:
            self._write_spool()

    def _write_spool(self) -> None:
        if self._spool is None:
            log.error("shutting down with %d recommendations not stored: %s", self.pending, ", ".join(self._pending))
            return
        lines = [msgspec.json.encode(_spooled(item)) + b"\n" for item in self._pending.values()]
        # One file per process (several workers share the folder), written beside and renamed into place, so a
        # crash mid-write leaves no half file that looks complete.
        name = f"pending-{os.getpid()}-{uuid.uuid4().hex[:12]}.jsonl"
        self._spool.mkdir(parents=True, exist_ok=True)
        partial = self._spool / f".{name}.partial"
        partial.write_bytes(b"".join(lines))
        partial.replace(self._spool / name)
        self._release_claimed()
        log.warning("spooled %d recommendations not yet stored to %s for the next start", self.pending, self._spool)

    def _load_spool(self) -> None:
        if self._spool is None or not self._spool.is_dir():
            return
        decoder = msgspec.json.Decoder(_Spooled)
        for path in sorted(self._spool.glob("pending-*.jsonl")):
            claimed = path.with_name(f".claimed-{os.getpid()}-{uuid.uuid4().hex[:12]}-{path.name}")
            try:
                # Renaming is atomic: of several processes starting together, one takes each file.
                path.rename(claimed)
            except FileNotFoundError:
                continue
            self._claimed.append(claimed)
            for number, line in enumerate(claimed.read_bytes().splitlines(), 1):
                try:
                    entry = decoder.decode(line)
                except msgspec.DecodeError as error:
                    log.error("spool %s line %d unreadable, skipped: %s", path, number, error)
                    continue
                self._pending.setdefault(entry.id, _unspooled(entry))
        if self._pending:
            self._waiting_since = time.monotonic()
            PENDING_RECOMMENDATIONS.set(self.pending)
            log.info("%d recommendations from the spool in %s wait to be stored", self.pending, self._spool)

    def _release_claimed(self) -> None:
        for path in self._claimed:
            path.unlink(missing_ok=True)
        self._claimed = []

    @staticmethod
    def _refused(item: SavedRecommendation, error: BaseException) -> None:
        REFUSED_RECOMMENDATIONS.inc()
        log.error("the database refused recommendation %s; not stored and not retried: %s", item.id, error)

    async def _retry_forever(self) -> None:
        while True:
            await asyncio.sleep(self._retry_s)
            if self._pending:
                await self.flush()

    async def _write(self, item: SavedRecommendation) -> None:
        async with self._sessions() as session, session.begin():
            await save_recommendation(
                session,
                recommendation_id=item.id,
                catalog_version=item.catalog_version,
                request=item.request,
                response=item.response,
                created_at=item.created_at,
            )
