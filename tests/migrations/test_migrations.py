"""Migrations reach head and match the models on both dialects, and downgrade cleanly."""

from __future__ import annotations

import asyncio
import zlib
from datetime import UTC, datetime
from pathlib import Path

import msgspec
import pytest
import sqlalchemy as sa
from alembic import command
from sqlalchemy.dialects import postgresql

from api.adapters.storage.database import create_engine
from api.adapters.storage.migrate import alembic_config
from tests.conftest import sqlite_url


def upgrade_check_downgrade(database_url: str) -> None:
    config = alembic_config(database_url)
    command.upgrade(config, "head")
    command.check(config)  # raises when the tables in api/adapters/storage/tables.py differ from the migrations
    command.downgrade(config, "base")
    command.upgrade(config, "head")


async def test_sqlite(tmp_path: Path) -> None:
    await asyncio.to_thread(upgrade_check_downgrade, sqlite_url(tmp_path))


@pytest.mark.integration
async def test_postgresql(postgres_url: str) -> None:
    await asyncio.to_thread(upgrade_check_downgrade, postgres_url)


def test_revisions_are_date_prefixed() -> None:
    versions = Path(__file__).parents[2] / "migrations" / "versions"
    names = [path.name for path in versions.glob("*.py")]
    assert names and all(name[:8].isdigit() for name in names)


DOCUMENT = {"id": "rec_before", "options": [{"gpu": "h100-sxm", "score": 87.5}], "summary": "é"}
DOCUMENT_TYPE = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
SAVED = sa.table(
    "saved_recommendations",
    sa.column("id", sa.String),
    sa.column("catalog_version", sa.String),
    sa.column("request", DOCUMENT_TYPE),
    sa.column("response", DOCUMENT_TYPE),
    sa.column("created_at", sa.DateTime(timezone=True)),
)


async def json_answer_survives_deflating(database_url: str) -> None:
    """A recommendation stored as JSON before revision 0004 reads the same after it, and after going back."""
    config = alembic_config(database_url)
    await asyncio.to_thread(command.upgrade, config, "20261201_0003")
    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:
            row = {"id": "rec_before", "catalog_version": "v", "request": {}, "response": DOCUMENT}
            await connection.execute(SAVED.insert(), {**row, "created_at": datetime.now(UTC)})
        await asyncio.to_thread(command.upgrade, config, "head")
        async with engine.connect() as connection:
            stored = await connection.scalar(sa.text("SELECT response FROM saved_recommendations"))
        assert msgspec.json.decode(zlib.decompress(stored)) == DOCUMENT
        await asyncio.to_thread(command.downgrade, config, "20261201_0003")
        async with engine.connect() as connection:
            assert await connection.scalar(sa.select(SAVED.c.response)) == DOCUMENT
    finally:
        await engine.dispose()


async def test_json_answers_survive_deflating_on_sqlite(tmp_path: Path) -> None:
    await json_answer_survives_deflating(sqlite_url(tmp_path))


@pytest.mark.integration
async def test_json_answers_survive_deflating_on_postgresql(postgres_url: str) -> None:
    await json_answer_survives_deflating(postgres_url)
