"""Saved recommendations under their content-addressed ids."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from api.storage.tables import SavedRecommendationRow


async def save_recommendations(session: AsyncSession, rows: list[dict[str, Any]]) -> set[str]:
    """Store each row once (id, catalog_version, request, response, created_at); the ids that were new.

    A stored id is left as it is, so the caller can answer with what is stored instead.
    """
    if not rows:
        return set()
    dialect = session.bind.dialect.name if session.bind else ""
    statement: Any
    if dialect == "postgresql":
        statement = postgresql.insert(SavedRecommendationRow).on_conflict_do_nothing()
    elif dialect == "sqlite":
        statement = sqlite.insert(SavedRecommendationRow).on_conflict_do_nothing()
    else:
        statement = insert(SavedRecommendationRow)
    result = await session.execute(statement.returning(SavedRecommendationRow.id), rows)
    return set(result.scalars().all())


async def load_recommendation(session: AsyncSession, recommendation_id: str) -> dict[str, Any] | None:
    """The stored recommendation document, or None."""
    row = await session.get(SavedRecommendationRow, recommendation_id)
    return row.response if row else None
