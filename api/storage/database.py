"""Engine and session factory for the configured database (SQLite file by default, PostgreSQL in production)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import event
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

# What a database call raises when the database is unreachable, slow or refusing: callers answer 503 or retry.
DATABASE_ERRORS = (SQLAlchemyError, OSError, TimeoutError)


def create_engine(database_url: str, *, connect_timeout_s: float = 5.0) -> AsyncEngine:
    """An engine that fails fast when the database is unreachable instead of hanging requests."""
    if database_url.startswith("sqlite"):
        engine = create_async_engine(database_url, connect_args={"timeout": connect_timeout_s})

        @event.listens_for(engine.sync_engine, "connect")
        def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            # WAL lets readers run while a price update commits; SQLite ignores foreign keys unless asked.
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

        return engine
    return create_async_engine(
        database_url,
        pool_size=10,
        max_overflow=10,
        pool_pre_ping=True,
        pool_timeout=connect_timeout_s,
        connect_args={"timeout": connect_timeout_s, "command_timeout": 30},
    )


def create_session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    """Sessions whose objects stay readable after commit."""
    return async_sessionmaker(engine, expire_on_commit=False)
