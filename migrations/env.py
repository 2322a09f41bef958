"""Alembic environment: async engine, works on PostgreSQL and SQLite."""

from __future__ import annotations

import asyncio
import os

from alembic import context
from sqlalchemy import text
from sqlalchemy.engine import Connection

from api.adapters.storage.database import create_engine
from api.adapters.storage.tables import Base
from api.settings import DEFAULT_DATABASE_URL

config = context.config
target_metadata = Base.metadata
# Any fixed number works; it only has to be the same for every instance that migrates this database.
MIGRATION_LOCK_ID = 7_351_208_114


def database_url() -> str:
    return config.attributes.get("database_url") or os.environ.get("DATABASE_URL") or DEFAULT_DATABASE_URL


def run_migrations_offline() -> None:
    context.configure(url=database_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def do_run_migrations(connection: Connection) -> None:
    is_sqlite = connection.dialect.name == "sqlite"
    # SQLite cannot ALTER most things in place; batch mode rebuilds the table instead.
    context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=is_sqlite)
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            # Several instances may start at once; only one may migrate, the others wait and find nothing to do.
            connection.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": MIGRATION_LOCK_ID})
        context.run_migrations()


async def run_migrations_online() -> None:
    engine = create_engine(database_url())
    async with engine.connect() as connection:
        await connection.run_sync(do_run_migrations)
    await engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    asyncio.run(run_migrations_online())
