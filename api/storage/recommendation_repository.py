"""Saved recommendations under their content-addressed ids."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, insert
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from api.storage.tables import SavedRecommendationRow


def _insert_new(dialect: str) -> Any:
    """INSERT that leaves a stored id as it is and returns the ids that were new."""
    statement: Any
    if dialect == "postgresql":
        statement = postgresql.insert(SavedRecommendationRow).on_conflict_do_nothing()
    elif dialect == "sqlite":
        statement = sqlite.insert(SavedRecommendationRow).on_conflict_do_nothing()
    else:
        statement = insert(SavedRecommendationRow)
    return statement.returning(SavedRecommendationRow.id)


async def save_recommendations(session: AsyncSession | AsyncConnection, rows: list[dict[str, Any]]) -> set[str]:
    """Store each row once (id, catalog_version, request, response, created_at); the ids that were new."""
    # A stored id is left as it is, so the caller can answer with what is stored instead.
    if not rows:
        return set()
    bind = session if isinstance(session, AsyncConnection) else session.bind
    dialect = bind.dialect.name if bind else ""
    result = await session.execute(_insert_new(dialect), rows)
    return set(result.scalars().all())


def save_recommendations_blocking(connection: Connection, rows: list[dict[str, Any]]) -> set[str]:
    """save_recommendations on a blocking connection (a thread of its own)."""
    if not rows:
        return set()
    result = connection.execute(_insert_new(connection.dialect.name), rows)
    return set(result.scalars().all())


async def load_recommendation(session: AsyncSession, recommendation_id: str) -> dict[str, Any] | None:
    """The stored recommendation document, or None."""
    row = await session.get(SavedRecommendationRow, recommendation_id)
    return row.response if row else None
