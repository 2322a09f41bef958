"""Shared fixtures: the reference catalog, an in-process app on a seeded SQLite file, real-service URLs."""

from __future__ import annotations

import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, date, datetime
from pathlib import Path

import asyncpg
import pytest
import uvicorn
from litestar import Litestar
from litestar.testing import AsyncTestClient

from api.adapters.storage.bootstrap import migrate_and_seed
from api.adapters.storage.reference import load_reference_catalog
from api.app import create_app
from api.settings import Settings
from domain.catalog import Catalog, Gpu, LlmModel, Offer
from domain.planning import EstimateRequest, estimate
from domain.workloads.results import ExchangeRate, Option

# CI sets this so that a missing PostgreSQL or Redis fails the run instead of silently skipping tests.
REQUIRE_SERVICES = os.environ.get("GPU_ADVISOR_REQUIRE_SERVICES") == "1"
POSTGRES_ADMIN_URL = os.environ.get("TEST_POSTGRES_ADMIN_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


# The clock and exchange rate of domain tests that call the planner directly.
NOW = datetime(2026, 12, 1, tzinfo=UTC)
RATE = ExchangeRate(usd_to_cny=7.1, as_of=date(2026, 11, 1), source="test")


def run_estimate(catalog: Catalog, workload: object, gpu_id: str, count: int, **extra: object) -> Option:
    """One explicit configuration estimated by the domain, in English."""
    request = EstimateRequest(workload=workload, gpu=gpu_id, gpu_count=count, **extra)  # type: ignore[arg-type]
    return estimate(catalog, request, now=NOW, lang="en", rate=RATE)


def service_unavailable(what: str, error: BaseException | str) -> None:
    """Skip locally, fail in CI."""
    message = f"{what} is not reachable ({error})"
    if REQUIRE_SERVICES:
        pytest.fail(message + " and GPU_ADVISOR_REQUIRE_SERVICES=1", pytrace=False)
    pytest.skip(message)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def reference() -> Catalog:
    return load_reference_catalog()


def llm(catalog: Catalog, model_id: str) -> LlmModel:
    """A catalog language model, asserting it exists and is one."""
    model = catalog.model(model_id)
    assert isinstance(model, LlmModel), model_id
    return model


def with_offers(catalog: Catalog, offers: list[Offer]) -> Catalog:
    """The catalog with these offers instead of its own (validated again, as a new snapshot)."""
    return Catalog(
        gpus=catalog.gpus, systems=catalog.systems, providers=catalog.providers, offers=offers, models=catalog.models
    )


def gpu(catalog: Catalog, gpu_id: str) -> Gpu:
    """A catalog GPU, asserting it exists."""
    found = catalog.gpu(gpu_id)
    assert found is not None, gpu_id
    return found


def sqlite_url(folder: Path) -> str:
    return f"sqlite+aiosqlite:///{folder / 'gpu-advisor.db'}"


@pytest.fixture(scope="session")
async def seeded_sqlite_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = sqlite_url(tmp_path_factory.mktemp("sqlite"))
    await migrate_and_seed(url)
    return url


@pytest.fixture(scope="session")
def app(seeded_sqlite_url: str) -> Litestar:
    # One address sends the whole suite through this app; the limiter has tests of its own.
    return create_app(Settings(database_url=seeded_sqlite_url, rate_limit_per_minute=0))


@pytest.fixture(scope="session")
async def client(app: Litestar) -> AsyncIterator[AsyncTestClient[Litestar]]:
    async with AsyncTestClient(app=app) as test_client:
        yield test_client


async def create_database() -> str:
    """A fresh, empty PostgreSQL database; its asyncpg SQLAlchemy URL."""
    name = f"gpu_advisor_test_{uuid.uuid4().hex[:12]}"
    try:
        connection = await asyncpg.connect(POSTGRES_ADMIN_URL, timeout=5)
    except (OSError, asyncpg.PostgresError) as error:
        service_unavailable("PostgreSQL", error)
    try:
        await connection.execute(f'CREATE DATABASE "{name}"')
    finally:
        await connection.close()
    base = POSTGRES_ADMIN_URL.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://", 1)
    return f"{base}/{name}"


async def drop_database(url: str) -> None:
    name = url.rsplit("/", 1)[1]
    connection = await asyncpg.connect(POSTGRES_ADMIN_URL, timeout=5)
    try:
        await connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await connection.close()


@pytest.fixture
async def postgres_url() -> AsyncIterator[str]:
    """An empty PostgreSQL database of this test's own, dropped afterwards."""
    url = await create_database()
    yield url
    await drop_database(url)


class LiveServer:
    """The app served by uvicorn on a free loopback port, in a thread of this process."""

    def __init__(self, app: Litestar) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    def __enter__(self) -> LiveServer:
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the test server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *_: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=20)


CONTRACT_API_KEY = "contract-test-key"


@pytest.fixture(scope="session")
async def contract_database_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A database of the contract run's own: its writes must not leak into the other tests."""
    url = sqlite_url(tmp_path_factory.mktemp("contract"))
    await migrate_and_seed(url)
    return url


@pytest.fixture(scope="session")
def live_server(contract_database_url: str) -> Iterator[LiveServer]:
    # Schemathesis sends thousands of requests from one address; the limiter has tests of its own.
    settings = Settings(database_url=contract_database_url, api_keys=(CONTRACT_API_KEY,), rate_limit_per_minute=0)
    with LiveServer(create_app(settings)) as server:
        yield server


@pytest.fixture(scope="module")
def private_sqlite_url(seeded_sqlite_url: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A copy of the seeded database for one module: its writes (and floods) stay out of the shared one."""
    source = seeded_sqlite_url.split(":///", 1)[1]
    url = sqlite_url(tmp_path_factory.mktemp("private"))
    origin, copy = sqlite3.connect(source), sqlite3.connect(url.split(":///", 1)[1])
    try:
        origin.backup(copy)  # consistent even while the WAL holds changes
    finally:
        origin.close()
        copy.close()
    return url
