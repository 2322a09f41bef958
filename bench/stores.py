"""Stores a benchmark may own: a fresh PostgreSQL database (dropped and created again) and a redis-server of its
own on a free port, which it can kill and start again."""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.servers import HOST, STOP_TIMEOUT_S, BenchError, free_port, log_tail, stop_server

POSTGRES_ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres"


def add_fresh_database_options(parser: argparse.ArgumentParser, *, name: str, when: str) -> None:
    """--postgres-admin-url and --database-name: where `fresh_postgres_database` makes its database, and its name."""
    parser.add_argument(
        "--postgres-admin-url",
        default=POSTGRES_ADMIN_URL,
        help=f"{when}: where to create the fresh database (default {POSTGRES_ADMIN_URL})",
    )
    parser.add_argument("--database-name", default=name, help=f"the fresh database's name (default {name})")


REDIS_INSTALL_HINT = "install it (Debian: apt-get install -y redis-server) or pass --redis-url"


@contextmanager
def fresh_postgres_database(admin_url: str, name: str, *, keep: bool = False) -> Iterator[str]:
    """Drop and create database `name` through admin_url (asyncpg), yield its DATABASE_URL, drop it afterwards.

    `keep` leaves it in place after the run (it is still dropped and created again by the next one).
    """
    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", name):
        raise BenchError(f"database name {name!r} is not a plain lower-case identifier")
    import asyncpg  # only benchmarks on PostgreSQL need it

    async def execute(*statements: str) -> None:
        connection = await asyncpg.connect(admin_url, timeout=10)
        try:
            for statement in statements:
                await connection.execute(statement)
        finally:
            await connection.close()

    def run(*statements: str) -> None:
        try:
            asyncio.run(execute(*statements))
        except (OSError, asyncpg.PostgresError, TimeoutError) as error:
            raise BenchError(f"PostgreSQL at {admin_url} ({statements[0]}): {error}") from error

    drop = f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'
    run(drop, f'CREATE DATABASE "{name}"')
    base = admin_url.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://", 1)
    try:
        yield f"{base}/{name}"
    finally:
        if not keep:
            run(drop)


class RedisServer:
    """A redis-server of the benchmark's own on a free port of HOST, without persistence; it can be killed."""

    def __init__(self, workdir: Path, port: int | None = None) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise BenchError(f"redis-server is not installed: {REDIS_INSTALL_HINT}")
        self.binary = binary
        self.port = port or free_port()
        self.workdir = workdir
        self.log_path = workdir / "redis.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://{HOST}:{self.port}/0"

    def start(self, timeout_s: float = 10.0) -> None:
        """Start it and wait until it answers PING; BenchError when it does not."""
        command = [
            self.binary,
            "--port",
            str(self.port),
            "--bind",
            HOST,
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(self.workdir),
        ]
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise BenchError(f"redis-server exited with code {self.process.returncode}:\n{log_tail(self.log_path)}")
            if self.ping():
                return
            time.sleep(0.05)
        raise BenchError(f"redis-server did not answer PING within {timeout_s:g} s:\n{log_tail(self.log_path)}")

    def ping(self) -> bool:
        try:
            with socket.create_connection((HOST, self.port), timeout=0.5) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def kill(self) -> None:
        """SIGKILL: the cache disappears at once, as in a crash."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=STOP_TIMEOUT_S)

    def stop(self) -> None:
        if self.process is not None:
            stop_server(self.process)


@contextmanager
def own_redis(workdir: Path) -> Iterator[RedisServer]:
    """A started RedisServer, stopped on exit."""
    server = RedisServer(workdir)
    try:
        server.start()
        yield server
    finally:
        server.stop()
