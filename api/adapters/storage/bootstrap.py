"""Bring a database to the current schema and reference data: what `serve` does before it listens."""

from __future__ import annotations

import asyncio

from api.adapters.storage.catalog_repository import SeedReport, seed_catalog
from api.adapters.storage.database import create_engine, create_session_factory
from api.adapters.storage.migrate import upgrade
from api.adapters.storage.reference import load_reference_catalog


async def seed_database(database_url: str) -> SeedReport:
    """Seed (idempotently) from the shipped reference data in one transaction."""
    engine = create_engine(database_url)
    try:
        async with create_session_factory(engine)() as session, session.begin():
            return await seed_catalog(session, load_reference_catalog())
    finally:
        await engine.dispose()


async def migrate_and_seed(database_url: str) -> SeedReport:
    """Apply migrations, then seed."""
    # Alembic's env.py runs its own event loop, so it needs a thread of its own.
    await asyncio.to_thread(upgrade, database_url)
    return await seed_database(database_url)
