"""A batch of offer changes on asyncpg itself, for the offer writer (PostgreSQL).

Every offer write of the cluster waits for the writer's transaction, and on the writer's thread each statement
through SQLAlchemy cost several times asyncpg's own (0.24 against 0.06 ms of CPU for the digest read; about 4 ms
a one-offer batch in all): the same statements as SessionTables, written once here in PostgreSQL's terms.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from types import SimpleNamespace
from typing import Any

import asyncpg

from api.adapters.storage.catalog_repository import CATALOG_META_KEY, CATALOG_WRITE_LOCK_ID
from api.adapters.storage.offer_repository import HISTORY, OFFERS, RowChanges
from api.adapters.storage.tables import CatalogMetaRow
from domain.catalog import Catalog
from domain.catalog.digest import DIGEST_MODULUS, version_of

OFFER_COLUMNS = tuple(column.name for column in OFFERS.columns)
HISTORY_COLUMNS = tuple(column.name for column in HISTORY.columns if column.autoincrement is not True)
META = CatalogMetaRow.__tablename__
assert OFFER_COLUMNS[0] == "id"  # UPDATE_ROW binds the key first


def _insert(table: str, columns: Sequence[str]) -> str:
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join(f'${n}' for n in range(1, len(columns) + 1))})"
    )


SELECT_DIGESTS = f"SELECT structure_digest, offers_digest FROM {META} WHERE key = $1"
LOCK_SHARED = "SELECT pg_advisory_xact_lock_shared($1)"
# Locked in id order, so two batches that share offers wait for each other instead of deadlocking.
SELECT_ROWS = (
    f"SELECT {', '.join(OFFER_COLUMNS)} FROM {OFFERS.name} WHERE id = ANY($1::varchar[]) ORDER BY id FOR UPDATE"
)
DELETE_ROWS = f"DELETE FROM {OFFERS.name} WHERE id = ANY($1::varchar[])"
INSERT_ROW = _insert(OFFERS.name, OFFER_COLUMNS)
_SET = ", ".join(f"{column} = ${n}" for n, column in enumerate(OFFER_COLUMNS, 1) if n > 1)
UPDATE_ROW = f"UPDATE {OFFERS.name} SET {_SET} WHERE id = $1"
INSERT_HISTORY = _insert(HISTORY.name, HISTORY_COLUMNS)
MOVE_DIGEST = (
    f"UPDATE {META} SET offers_digest = (offers_digest + $1) % $2, updated_at = $3 WHERE key = $4 "
    "RETURNING structure_digest, offers_digest"
)


class NeedsSession(Exception):
    """A batch these statements leave to SQLAlchemy: a store without digests yet, or a snapshot behind the stored
    structure (both read every table, which only SessionTables does)."""


class ConnectionTables:
    """SessionTables' statements on one asyncpg connection, in its open transaction."""

    def __init__(self, connection: asyncpg.Connection) -> None:
        self._connection = connection

    async def digests(self) -> tuple[int, int] | None:
        row = await self._connection.fetchrow(SELECT_DIGESTS, CATALOG_META_KEY)
        return (int(row[0]), int(row[1])) if row is not None else None

    async def lock(self, *, shared: bool) -> None:
        if not shared:  # no digests stored yet: the version needs every table, which only SessionTables reads
            raise NeedsSession
        await self._connection.execute(LOCK_SHARED, CATALOG_WRITE_LOCK_ID)

    async def catalog(self) -> Catalog | None:
        raise NeedsSession

    async def locked_rows(self, ids: Sequence[str]) -> dict[str, SimpleNamespace]:
        rows = await self._connection.fetch(SELECT_ROWS, list(ids))
        # What SQLAlchemy's Money column gives back: a float, not asyncpg's Decimal.
        return {
            row["id"]: SimpleNamespace(**{**row, "usd_per_gpu_hour": float(row["usd_per_gpu_hour"])}) for row in rows
        }

    async def store(self, rows: RowChanges) -> None:
        connection = self._connection
        if rows.deleted:
            await connection.execute(DELETE_ROWS, rows.deleted)
        if rows.created:
            await connection.executemany(INSERT_ROW, _values(rows.created, OFFER_COLUMNS))
        if rows.updated:
            await connection.executemany(UPDATE_ROW, _values(rows.updated, OFFER_COLUMNS))
        if rows.history:
            await connection.executemany(INSERT_HISTORY, _values(rows.history, HISTORY_COLUMNS))

    async def move_offers_digest(self, delta: int, now: datetime) -> str | None:
        row = await self._connection.fetchrow(MOVE_DIGEST, delta, DIGEST_MODULUS, now, CATALOG_META_KEY)
        return version_of(row[0], row[1]) if row else None

    async def record(self, now: datetime) -> str:
        raise NeedsSession


def _values(rows: list[dict[str, Any]], columns: Sequence[str]) -> list[tuple[Any, ...]]:
    return [tuple(row[column] for column in columns) for row in rows]
