"""Migrations reach head and match the models on both dialects, and downgrade cleanly."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from alembic import command

from api.storage.migrate import alembic_config
from tests.conftest import sqlite_url


def upgrade_check_downgrade(database_url: str) -> None:
    config = alembic_config(database_url)
    command.upgrade(config, "head")
    command.check(config)  # raises when the tables in api/storage/tables.py differ from the migrations
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
