"""A catalog change from the command line: one transaction on the configured database, then tell the instances."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from sqlalchemy.ext.asyncio import AsyncSession

from api.adapters.storage.database import create_engine, create_session_factory
from api.services.catalog_sync import announce
from api.settings import Settings

R = TypeVar("R")


async def write_and_announce(
    settings: Settings, work: Callable[[AsyncSession], Awaitable[R]], version: Callable[[R], str | None]
) -> R:
    """Run `work` in one transaction; when it returns a new catalog version, every instance is told to reload."""
    engine = create_engine(settings.database_url)
    try:
        async with create_session_factory(engine)() as session, session.begin():
            report = await work(session)
        if (new_version := version(report)) is not None:
            await announce(settings.redis_url, new_version, settings.redis_timeout_s)
        return report
    finally:
        await engine.dispose()
