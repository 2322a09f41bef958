"""Fixtures on the real services: a seeded PostgreSQL database, the machine's Redis, a Redis and a PostgreSQL
cluster of the test's own (to kill and restart without touching the machine's)."""

from __future__ import annotations

import asyncio
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from api.adapters.storage.bootstrap import migrate_and_seed
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


def postgres_bin_dir() -> Path | None:
    """The newest installed PostgreSQL's binaries (Debian layout first, then PATH)."""

    def version(folder: Path) -> tuple[int, ...]:
        name = folder.parent.name
        return tuple(int(part) for part in name.split(".") if part.isdigit())

    installed = sorted(
        (Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/initdb")), key=version, reverse=True
    )
    if installed:
        return installed[0]
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


class OwnPostgres:
    """A PostgreSQL cluster of the test's own in a temporary folder, so stopping it leaves the machine's alone."""

    def __init__(self, bin_dir: Path) -> None:
        self.bin_dir = bin_dir
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="gpu-advisor-pg-"))
        self.data = self.root / "data"
        self.sockets = self.root / "sockets"
        self.log = self.root / "postgres.log"
        self.running = False

    @property
    def url(self) -> str:
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, program: str, *args: str) -> None:
        command = [str(self.bin_dir / program), *args]
        if os.geteuid() == 0:  # initdb and postgres refuse to run as root
            command = ["runuser", "-u", "postgres", "--", *command]
        result = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
        if result.returncode != 0:
            log = self.log.read_text(errors="replace")[-4000:] if self.log.exists() else ""
            raise RuntimeError(f"{' '.join(command)} failed ({result.returncode}): {result.stderr}{result.stdout}{log}")

    def init(self) -> None:
        self.sockets.mkdir()
        if os.geteuid() == 0:
            for path in (self.root, self.sockets):
                shutil.chown(path, "postgres", "postgres")
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")

    def start(self) -> None:
        options = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.sockets} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        )
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "-t", "30", "start")
        self.running = True

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "30", "stop")
        self.running = False

    def remove(self) -> None:
        try:
            if self.running:
                self.stop()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture
def own_postgres() -> Iterator[OwnPostgres]:
    """A started, empty cluster of this test's own (database `postgres`, user `postgres`, trust auth)."""
    bin_dir = postgres_bin_dir()
    if bin_dir is None or not (bin_dir / "pg_ctl").exists():
        service_unavailable("PostgreSQL binaries (initdb, pg_ctl)", "not installed")
    assert bin_dir is not None
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            service_unavailable("the postgres user (to run PostgreSQL as non-root)", "no such user")
        if shutil.which("runuser") is None:
            service_unavailable("runuser (to run PostgreSQL as user postgres)", "not installed")
    server = OwnPostgres(bin_dir)
    try:
        server.init()
        server.start()
        yield server
    finally:
        server.remove()
