"""Model administration: create or replace a workload model with a history row, in one transaction."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession

from api.adapters.storage.catalog_repository import lock_catalog_writes, record_catalog, record_document
from api.adapters.storage.offer_repository import latest_changes
from api.adapters.storage.tables import ModelHistoryRow, ModelRow
from domain.catalog import ModelSpec


@dataclass
class ModelWriteReport:
    """What writing one model did."""

    created: bool
    changed: bool
    version: str = ""


async def write_model(session: AsyncSession, model: ModelSpec, *, actor: str) -> ModelWriteReport:
    """Store the model and its history row; CatalogError (roll back) when the catalog would become invalid."""
    await lock_catalog_writes(session)
    now = datetime.now(UTC)
    document = record_document(model)
    row = await session.get(ModelRow, model.id)
    if row is not None and row.record == document:
        return ModelWriteReport(created=False, changed=False)
    if row is None:
        session.add(ModelRow(id=model.id, kind=document["kind"], name=model.name, record=document, updated_at=now))
    else:
        row.kind, row.name, row.record, row.updated_at = document["kind"], model.name, document, now
    change = "created" if row is None else "updated"
    session.add(ModelHistoryRow(model_id=model.id, change=change, actor=actor, record=document, recorded_at=now))
    await session.flush()
    version = await record_catalog(session, now)
    return ModelWriteReport(created=row is None, changed=True, version=version)


async def model_history(session: AsyncSession, model_id: str, limit: int) -> tuple[list[ModelHistoryRow], int]:
    """The model's latest `limit` administrative changes, newest first, and how many there are in all."""
    return await latest_changes(session, ModelHistoryRow, ModelHistoryRow.model_id, model_id, limit)
