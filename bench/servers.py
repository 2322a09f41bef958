"""The gpu-advisor servers a benchmark starts: `gpu-advisor serve --workers N` (1 unless asked) as a subprocess on a
free port of 127.0.0.1, its environment, waiting for `GET /health/ready`, stopping it (terminate, then kill after a
timeout), the tail of its log, the CPU time of its processes, all behind the `running` context manager, with the
command-line options that configure it and the exit codes of a run.

The scripts run as `uv run python bench/<name>.py` and import this as `bench.servers` (the project root is on
sys.path in the project's environment), as do the other bench modules: one module object, one BenchError.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx

REPO_ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"

READY_TRIES = 150
READY_INTERVAL_S = 0.2
STOP_TIMEOUT_S = 10.0

T = TypeVar("T")


class BenchError(RuntimeError):
    """The benchmark cannot run (the server did not start or answered something unexpected)."""


# --- the server -------------------------------------------------------------------------------------------------


def free_port() -> int:
    """A port of HOST that is free now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def server_env(database_url: str, redis_url: str | None, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment with the server's database, cache (or none), a quiet log level, no rate limit
    (unless the environment sets them), then `extra`."""
    env = dict(os.environ)
    env["DATABASE_URL"] = database_url
    env.pop("REDIS_URL", None)
    if redis_url:
        env["REDIS_URL"] = redis_url
    env.setdefault("GPU_ADVISOR_LOG_LEVEL", "WARNING")
    # A benchmark is one client sending thousands of requests: the per-client rate limit would answer 429.
    env.setdefault("GPU_ADVISOR_RATE_LIMIT_PER_MINUTE", "0")
    # One worker: metrics come from the process registry, which catalog_latency's cold-query miss count reads.
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    env.update(extra or {})
    return env


def start_server(
    port: int, env: dict[str, str], log_path: Path, *, migrate: bool, workers: int = 1
) -> subprocess.Popen[bytes]:
    """Start a server of `workers` processes on HOST:port, its output going to log_path."""
    command = [sys.executable, "-m", "api.cli", "serve", "--host", HOST, "--port", str(port), "--workers", str(workers)]
    if migrate:  # a fresh file must be migrated and seeded whatever GPU_ADVISOR_AUTO_MIGRATE says
        command.append("--migrate")
    with log_path.open("wb") as log:
        return subprocess.Popen(
            command,
            cwd=REPO_ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )


def stop_server(process: subprocess.Popen[bytes]) -> None:
    """Terminate the server, then kill it when it does not exit in time."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=STOP_TIMEOUT_S)


def process_tree(pid: int) -> Iterator[int]:
    """Process `pid` and its live descendants (Linux /proc; nothing where there is none)."""
    pending, seen = [pid], set()
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        yield current
        for task in Path(f"/proc/{current}/task").glob("*/children"):
            try:
                pending.extend(int(child) for child in task.read_text().split())
            except OSError:
                continue


def process_tree_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of process `pid` and its live descendants (Linux /proc; None elsewhere)."""
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    total = 0.0
    for current in process_tree(pid):
        try:
            stat = Path(f"/proc/{current}/stat").read_text()
        except OSError:
            if current == pid:
                return None
            continue
        fields = stat.rsplit(")", 1)[1].split()  # after "pid (comm)": state is fields[0], utime fields[11]
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def log_tail(log_path: Path, lines: int = 30) -> str:
    """The last `lines` lines of the server's output."""
    try:
        text = log_path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no server output)"
    return "\n".join(text.splitlines()[-lines:]) or "(no server output)"


def wait_until_ready(
    client: httpx.Client, process: subprocess.Popen[bytes], log_path: Path, *, tries: int = READY_TRIES
) -> dict[str, Any]:
    """The server's first 200 answer to GET /health/ready; BenchError when it exits or takes too long."""
    last = "no answer"
    for _ in range(tries):
        if process.poll() is not None:
            raise BenchError(
                f"the server exited with code {process.returncode} before it was ready:\n{log_tail(log_path)}"
            )
        try:
            response = client.get("/health/ready", timeout=2.0)
            if response.status_code == 200:
                ready: dict[str, Any] = response.json()
                return ready
            last = f"HTTP {response.status_code}: {response.text[:200]}"
        except httpx.TransportError as error:
            last = f"{type(error).__name__}"
        time.sleep(READY_INTERVAL_S)
    raise BenchError(
        f"the server was not ready after {tries * READY_INTERVAL_S:.0f} s (last: {last}):\n{log_tail(log_path)}"
    )


@dataclass(frozen=True)
class LiveServer:
    """A ready server: a keep-alive client to it, its /health/ready answer and the stores it was given."""

    client: httpx.Client
    ready: dict[str, Any]
    database_url: str
    redis_url: str | None
    workers: int = 1
    process: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None

    @property
    def url(self) -> str:
        """http://HOST:port"""
        return str(self.client.base_url).rstrip("/")

    def cpu_s(self) -> float | None:
        """CPU seconds used so far by the server's processes (the supervisor and its workers), when known."""
        return process_tree_cpu_s(self.process.pid) if self.process is not None else None

    def check_alive(self) -> None:
        """BenchError when the server has exited."""
        if self.process is not None and self.process.poll() is not None:
            tail = log_tail(self.log_path) if self.log_path else ""
            raise BenchError(f"the server exited with code {self.process.returncode} during the run:\n{tail}")

    def facts(self, catalog_key: str) -> dict[str, Any]:
        """Database, cache, catalog version (under `catalog_key`), ready status and workers, for a report."""
        return {
            "database": self.database_url.split("://")[0],
            "cache": f"redis ({self.ready.get('redis')})" if self.redis_url else "in-process",
            catalog_key: self.ready.get("catalog_version"),
            "ready_status": self.ready.get("status"),
            "workers": self.workers,
        }


@contextmanager
def running(
    workdir: Path,
    *,
    database_url: str | None,
    redis_url: str | None,
    port: int | None,
    timeout_s: float,
    workers: int = 1,
    extra_env: Mapping[str, str] | None = None,
    migrate: bool | None = None,
) -> Iterator[LiveServer]:
    """Start a server (a fresh SQLite file in workdir without database_url), wait until ready, stop it on exit.

    `migrate` (default: only for that fresh SQLite file) passes `--migrate`; `extra_env` is added to the server's
    environment last. With several workers, PROMETHEUS_MULTIPROC_DIR is an empty folder of workdir, as in the
    container image, unless extra_env sets it.
    """
    url = database_url or f"sqlite+aiosqlite:///{workdir / 'bench.db'}"
    port = port or free_port()
    log_path = workdir / "server.log"
    extra = dict(extra_env or {})
    if workers > 1 and "PROMETHEUS_MULTIPROC_DIR" not in extra:
        metrics_dir = workdir / "metrics"
        metrics_dir.mkdir(exist_ok=True)
        extra["PROMETHEUS_MULTIPROC_DIR"] = str(metrics_dir)
    process = start_server(
        port,
        server_env(url, redis_url, extra),
        log_path,
        migrate=not database_url if migrate is None else migrate,
        workers=workers,
    )
    try:
        with httpx.Client(base_url=f"http://{HOST}:{port}", timeout=timeout_s) as client:
            ready = wait_until_ready(client, process, log_path)
            yield LiveServer(client, ready, url, redis_url, workers, process, log_path)
            if process.poll() is not None:
                raise BenchError(f"the server exited during the run:\n{log_tail(log_path)}")
    finally:
        stop_server(process)


def add_server_options(
    parser: argparse.ArgumentParser, *, database_help: str | None = None, redis_help: str | None = None
) -> None:
    """--database-url, --redis-url and --port (the help of the first two replaceable where the defaults differ)."""
    parser.add_argument(
        "--database-url", help=database_help or "DATABASE_URL for the server (default: a fresh SQLite file)"
    )
    parser.add_argument("--redis-url", help=redis_help or "REDIS_URL for the server (default: none, in-process cache)")
    parser.add_argument("--port", type=int, help="port on 127.0.0.1 (default: a free one)")


def check_server_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Exit with a usage error when --port is out of range."""
    if args.port is not None and not 1 <= args.port <= 65535:
        parser.error("--port must be between 1 and 65535")


def exit_on_sigterm() -> None:
    """Turn SIGTERM into SystemExit, so that the server is stopped as on Ctrl-C."""
    signal.signal(signal.SIGTERM, _raise_on_sigterm)


def _raise_on_sigterm(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


def run_in_workdir(prog: str, bench: Callable[[Path], T]) -> T | int:
    """bench(a fresh temporary directory), or the exit code after reporting a BenchError (2) or Ctrl-C (130)."""
    with tempfile.TemporaryDirectory(prefix="gpu-advisor-bench-") as tmp:
        try:
            return bench(Path(tmp))
        except BenchError as error:
            print(f"{prog}: {error}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print(f"{prog}: interrupted; the server was stopped", file=sys.stderr)
            return 130
