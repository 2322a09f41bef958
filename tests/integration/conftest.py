"""Fixtures on the real services: a seeded PostgreSQL database, the machine's Redis, a Redis of the test's own."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from collections.abc import AsyncIterator, Iterator

import pytest
from redis.asyncio import Redis

from api.storage.bootstrap import migrate_and_seed
from tests.conftest import REDIS_URL, free_port, service_unavailable


@pytest.fixture
async def seeded_postgres(postgres_url: str) -> str:
    await migrate_and_seed(postgres_url)
    return postgres_url


@pytest.fixture
async def redis() -> AsyncIterator[Redis]:
    client = Redis.from_url(REDIS_URL, socket_timeout=2, socket_connect_timeout=2)
    try:
        await client.ping()
    except OSError as error:
        service_unavailable("Redis", error)
    except Exception as error:  # redis raises its own ConnectionError, not an OSError
        service_unavailable("Redis", error)
    await client.flushdb()
    yield client
    await client.flushdb()
    await client.aclose()


class OwnRedis:
    """A redis-server of the test's own, so killing it leaves the machine's Redis alone."""

    def __init__(self) -> None:
        self.binary = shutil.which("redis-server")
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        assert self.binary
        self.process = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=10)
            self.process = None


@pytest.fixture
def own_redis() -> Iterator[OwnRedis]:
    server = OwnRedis()
    if server.binary is None:
        service_unavailable("redis-server", "not installed")
    server.start()
    yield server
    server.kill()


async def wait_for_ping(url: str) -> None:
    client = Redis.from_url(url, socket_timeout=1, socket_connect_timeout=1)
    try:
        for _ in range(200):
            try:
                await client.ping()
                return
            except Exception:
                await asyncio.sleep(0.05)
        raise AssertionError(f"redis at {url} never answered")
    finally:
        await client.aclose()
