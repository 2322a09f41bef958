"""Saved recommendations under their content-addressed ids."""

from __future__ import annotations

import zlib
from typing import Any

import msgspec
from sqlalchemy import Connection, insert, select
from sqlalchemy.dialects import sqlite
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from api.adapters.storage.database import to_json
from api.adapters.storage.tables import SavedRecommendationRow

# Level 1: a 40 kB answer deflates to ~6.6 kB in ~0.13 ms; level 6 saves another 1 kB for twice the time.
DEFLATE_LEVEL = 1


def deflated(document: Any) -> bytes:
    """The stored form of an answer: its JSON (as sent, when it is msgspec.Raw), deflated."""
    return zlib.compress(msgspec.json.encode(document), DEFLATE_LEVEL)


def inflated(stored: bytes) -> msgspec.Raw:
    """The answer as it was sent, from its stored form."""
    return msgspec.Raw(zlib.decompress(stored))


def _insert_new(dialect: str) -> Any:
    """INSERT that leaves a stored id as it is and returns the ids that were new."""
    # PostgreSQL takes save_recommendations_postgresql.
    statement: Any
    if dialect == "sqlite":
        statement = sqlite.insert(SavedRecommendationRow).on_conflict_do_nothing()
    else:
        statement = insert(SavedRecommendationRow)
    return statement.returning(SavedRecommendationRow.id)


async def save_recommendations(session: AsyncSession | AsyncConnection, rows: list[dict[str, Any]]) -> set[str]:
    """Store each row once (id, catalog_version, request, deflated response, created_at); the ids that were new."""
    # A stored id is left as it is, so the caller can answer with what is stored instead.
    if not rows:
        return set()
    bind = session if isinstance(session, AsyncConnection) else session.bind
    dialect = bind.dialect.name if bind else ""
    result = await session.execute(_insert_new(dialect), rows)
    return set(result.scalars().all())


# A whole batch in one statement, its columns as arrays: nothing for SQLAlchemy to compile or to build per row, and no
# insertmanyvalues bookkeeping for the RETURNING rows (a tenth of the CPU of the ORM-neutral insert above).
_POSTGRESQL_INSERT = (
    "INSERT INTO saved_recommendations (id, catalog_version, request, response, created_at) "
    "SELECT * FROM unnest($1::varchar[], $2::varchar[], $3::jsonb[], $4::bytea[], $5::timestamptz[]) "
    "ON CONFLICT (id) DO NOTHING RETURNING id"
)


async def save_recommendations_postgresql(connection: AsyncConnection, rows: list[dict[str, Any]]) -> set[str]:
    """save_recommendations on PostgreSQL (asyncpg) in one statement; the ids that were new."""
    if not rows:
        return set()
    columns = (
        [row["id"] for row in rows],
        [row["catalog_version"] for row in rows],
        [to_json(row["request"]) for row in rows],
        [row["response"] for row in rows],
        [row["created_at"] for row in rows],
    )
    result = await connection.exec_driver_sql(_POSTGRESQL_INSERT, columns)
    return set(result.scalars().all())


def save_recommendations_blocking(connection: Connection, rows: list[dict[str, Any]]) -> set[str]:
    """save_recommendations on a blocking connection (a thread of its own)."""
    if not rows:
        return set()
    result = connection.execute(_insert_new(connection.dialect.name), rows)
    return set(result.scalars().all())


async def load_recommendation(session: AsyncSession, recommendation_id: str) -> msgspec.Raw | None:
    """The stored recommendation as it was sent, or None."""
    stored = await session.scalar(
        select(SavedRecommendationRow.response).where(SavedRecommendationRow.id == recommendation_id)
    )
    return inflated(stored) if stored is not None else None
