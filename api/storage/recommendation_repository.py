"""Saved recommendations under their content-addressed ids."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import insert
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from api.storage.tables import SavedRecommendationRow


async def save_recommendation(
    session: AsyncSession,
    *,
    recommendation_id: str,
    catalog_version: str,
    request: dict[str, Any],
    response: dict[str, Any],
    created_at: datetime,
) -> None:
    """Store once; an id that is already stored (same request, same catalog) is left as it is."""
    values = {
        "id": recommendation_id,
        "catalog_version": catalog_version,
        "request": request,
        "response": response,
        "created_at": created_at,
    }
    dialect = session.bind.dialect.name if session.bind else ""
    statement: Any
    if dialect == "postgresql":
        statement = postgresql.insert(SavedRecommendationRow).values(values).on_conflict_do_nothing()
    elif dialect == "sqlite":
        statement = sqlite.insert(SavedRecommendationRow).values(values).on_conflict_do_nothing()
    else:
        statement = insert(SavedRecommendationRow).values(values)
    await session.execute(statement)


async def load_recommendation(session: AsyncSession, recommendation_id: str) -> dict[str, Any] | None:
    """The stored recommendation document, or None."""
    row = await session.get(SavedRecommendationRow, recommendation_id)
    return row.response if row else None
