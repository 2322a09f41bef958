"""Engine and session factory for the configured database (SQLite file by default, PostgreSQL in production)."""

from __future__ import annotations

import re
from typing import Any

import asyncpg
import msgspec
from sqlalchemy import Engine, event
from sqlalchemy import create_engine as sqlalchemy_create_engine
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DataError, DBAPIError, IntegrityError, SQLAlchemyError, StatementError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.pool import SingletonThreadPool

# What a database call raises when the database is unreachable, slow or refusing: callers answer 503 or retry.
DATABASE_ERRORS = (SQLAlchemyError, OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError)
# SQLSTATE classes of a refusal of the data itself (data exception, integrity violation): retrying cannot help.
_REFUSED_CLASSES = ("22", "23")


def refused_data(error: BaseException) -> bool:
    """Whether the database refused this data (permanent), rather than being unreachable or failing for now."""
    if isinstance(error, DataError | IntegrityError):
        return True
    if isinstance(error, asyncpg.PostgresError):  # the offer writer's own statements (offer_statements.py)
        return isinstance(error.sqlstate, str) and error.sqlstate[:2] in _REFUSED_CLASSES
    if isinstance(error, DBAPIError):
        code = getattr(error.orig, "sqlstate", None) or getattr(error.orig, "pgcode", None)
        return isinstance(code, str) and code[:2] in _REFUSED_CLASSES
    # A statement error that is not the driver's: the parameters could not even be sent.
    return isinstance(error, StatementError)


def to_json(value: Any) -> str:
    """A document as the JSON text the engines store."""
    # msgspec is several times faster than json.dumps on large documents and passes msgspec.Raw through as is.
    return _json_encoder.encode(value).decode()


_json_encoder = msgspec.json.Encoder()
_JSON = {"json_serializer": to_json, "json_deserializer": msgspec.json.decode}


def create_engine(database_url: str, *, connect_timeout_s: float = 5.0) -> AsyncEngine:
    """An engine that fails fast when the database is unreachable instead of hanging requests."""
    if database_url.startswith("sqlite"):
        # Each aiosqlite connection is a thread of its own: keep enough open that bursts do not start new ones.
        engine = create_async_engine(
            database_url, pool_size=10, max_overflow=10, connect_args={"timeout": connect_timeout_s}, **_JSON
        )
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        return engine
    return create_async_engine(
        database_url,
        pool_size=10,
        max_overflow=10,
        pool_pre_ping=True,
        pool_timeout=connect_timeout_s,
        connect_args={"timeout": connect_timeout_s, "command_timeout": 30},
        **_JSON,
    )


def sqlite_file_engine(engine: AsyncEngine, *, connect_timeout_s: float = 5.0) -> Engine | None:
    """A blocking engine on the same SQLite file as `engine`, with the same settings; None unless it is a file."""
    # For a thread of its own that does a whole transaction in one call: through aiosqlite every statement, commit and
    # cursor is a hop back to the event loop, each waiting behind whatever the loop runs meanwhile.
    url = engine.url
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    sync = sqlalchemy_create_engine(
        url.set(drivername="sqlite+pysqlite"),
        # One thread uses it; SQLite's own lock (with this busy timeout) orders it with the other connections.
        poolclass=SingletonThreadPool,
        connect_args={"timeout": connect_timeout_s},
        **_JSON,
    )
    event.listen(sync, "connect", _sqlite_pragmas)
    return sync


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    # WAL lets readers run while a price update commits; SQLite ignores foreign keys unless asked.
    cursor.execute("PRAGMA journal_mode=WAL")
    # In WAL mode NORMAL survives a crash of the process; only an OS crash or power loss can drop the
    # last commits. FULL would fsync every saved recommendation.
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def create_session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    """Sessions whose objects stay readable after commit."""
    return async_sessionmaker(engine, expire_on_commit=False)


# How each engine says a table is missing: the schema was never migrated (or is older than the code).
_NO_TABLE = re.compile(r"no such table: (\w+)|relation \"(\w+)\" does not exist|UndefinedTable")


def explain_database_error(error: BaseException, database_url: str) -> str:
    """One readable line for a database failure: not migrated, not reachable, or what the driver said, no SQL."""
    where = _where(database_url)
    text = str(getattr(error, "orig", None) or error)
    missing = _NO_TABLE.search(text)
    if missing:
        table = missing.group(1) or missing.group(2)
        found = f" (no table {table})" if table else ""
        return f"the database {where} is not migrated{found}: run `gpu-advisor migrate`, then `gpu-advisor seed`"
    reason = text.split("\n")[0].split("[SQL:")[0].strip()
    if isinstance(error, OSError | TimeoutError) or isinstance(getattr(error, "orig", None), OSError):
        return f"cannot reach the database {where} ({reason or type(error).__name__}); check DATABASE_URL"
    return f"the database {where} failed: {reason or type(error).__name__}"


def _where(database_url: str) -> str:
    """Where the database is, without its password."""
    try:
        url = make_url(database_url)
    except ArgumentError:
        return "in DATABASE_URL"
    if url.get_backend_name() == "sqlite":
        return f"file {url.database or ':memory:'}"
    return f"at {url.host or 'localhost'}:{url.port or 5432}/{url.database or ''}"
