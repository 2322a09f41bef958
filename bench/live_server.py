"""What the benchmark scripts in bench/ share: a live gpu-advisor server and the reporting of HTTP timings.

- the server: `gpu-advisor serve --workers 1` as a subprocess on a free port of 127.0.0.1, its environment,
  waiting for `GET /health/ready`, stopping it (terminate, then kill after a timeout), the tail of its log,
  all behind the `running` context manager, with the command-line options that configure it;
- statistics: nearest-rank percentiles, milliseconds, and the summary of one endpoint's timed requests;
- the report: aligned text tables, the HTTP results table, the platform facts and the exit codes.

The scripts run as `uv run python bench/<name>.py`, so this folder is on sys.path and they import it as
`live_server`.
"""

from __future__ import annotations

import argparse
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
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


@dataclass(frozen=True)
class HttpResult:
    """Timings of one endpoint's measured requests."""

    endpoint: str
    requests: int
    median_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float
    requests_per_s: float
    non_200: int


# --- the server -------------------------------------------------------------------------------------------------


def free_port() -> int:
    """A port of HOST that is free now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def server_env(database_url: str, redis_url: str | None) -> dict[str, str]:
    """This process's environment with the server's database, cache (or none) and a quiet log level."""
    env = dict(os.environ)
    env["DATABASE_URL"] = database_url
    env.pop("REDIS_URL", None)
    if redis_url:
        env["REDIS_URL"] = redis_url
    env.setdefault("GPU_ADVISOR_LOG_LEVEL", "WARNING")
    # One worker: metrics come from the process registry, which catalog_latency's cold-query miss count reads.
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    return env


def start_server(port: int, env: dict[str, str], log_path: Path, *, migrate: bool) -> subprocess.Popen[bytes]:
    """Start a one-worker server on HOST:port, its output going to log_path."""
    command = [sys.executable, "-m", "api.cli", "serve", "--host", HOST, "--port", str(port), "--workers", "1"]
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


def log_tail(log_path: Path, lines: int = 30) -> str:
    """The last `lines` lines of the server's output."""
    try:
        text = log_path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no server output)"
    return "\n".join(text.splitlines()[-lines:]) or "(no server output)"


def wait_until_ready(client: httpx.Client, process: subprocess.Popen[bytes], log_path: Path) -> dict[str, Any]:
    """The server's first 200 answer to GET /health/ready; BenchError when it exits or takes too long."""
    last = "no answer"
    for _ in range(READY_TRIES):
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
        f"the server was not ready after {READY_TRIES * READY_INTERVAL_S:.0f} s (last: {last}):\n{log_tail(log_path)}"
    )


@dataclass(frozen=True)
class LiveServer:
    """A ready server: a keep-alive client to it, its /health/ready answer and the stores it was given."""

    client: httpx.Client
    ready: dict[str, Any]
    database_url: str
    redis_url: str | None

    def facts(self, catalog_key: str) -> dict[str, Any]:
        """Database, cache, catalog version (under `catalog_key`), ready status and workers, for a report."""
        return {
            "database": self.database_url.split("://")[0],
            "cache": f"redis ({self.ready.get('redis')})" if self.redis_url else "in-process",
            catalog_key: self.ready.get("catalog_version"),
            "ready_status": self.ready.get("status"),
            "workers": 1,
        }


@contextmanager
def running(
    workdir: Path, *, database_url: str | None, redis_url: str | None, port: int | None, timeout_s: float
) -> Iterator[LiveServer]:
    """Start a server (a fresh SQLite file in workdir without database_url), wait until ready, stop it on exit."""
    url = database_url or f"sqlite+aiosqlite:///{workdir / 'bench.db'}"
    port = port or free_port()
    log_path = workdir / "server.log"
    process = start_server(port, server_env(url, redis_url), log_path, migrate=not database_url)
    try:
        with httpx.Client(base_url=f"http://{HOST}:{port}", timeout=timeout_s) as client:
            yield LiveServer(client, wait_until_ready(client, process, log_path), url, redis_url)
            if process.poll() is not None:
                raise BenchError(f"the server exited during the run:\n{log_tail(log_path)}")
    finally:
        stop_server(process)


def add_server_options(parser: argparse.ArgumentParser) -> None:
    """--database-url, --redis-url and --port."""
    parser.add_argument("--database-url", help="DATABASE_URL for the server (default: a fresh SQLite file)")
    parser.add_argument("--redis-url", help="REDIS_URL for the server (default: none, in-process cache)")
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


# --- statistics -------------------------------------------------------------------------------------------------


def percentile(ordered: Sequence[int], percent: int) -> int:
    """Nearest-rank percentile of an ascending sequence (integer ceiling: no float rounding)."""
    rank = max(1, -(-len(ordered) * percent // 100))
    return ordered[rank - 1]


def ms(nanoseconds: float) -> float:
    """Nanoseconds as milliseconds, rounded to the microsecond."""
    return round(nanoseconds * 1e-6, 3)


def summarize(endpoint: str, durations_ns: list[int], elapsed_ns: int, non_200: int) -> HttpResult:
    """The result of requests that took durations_ns each and elapsed_ns in all."""
    ordered = sorted(durations_ns)
    return HttpResult(
        endpoint=endpoint,
        requests=len(ordered),
        median_ms=ms(statistics.median(ordered)),
        p95_ms=ms(percentile(ordered, 95)),
        p99_ms=ms(percentile(ordered, 99)),
        max_ms=ms(ordered[-1]),
        requests_per_s=round(len(ordered) / (elapsed_ns / 1e9), 1),
        non_200=non_200,
    )


# --- the report -------------------------------------------------------------------------------------------------


def render(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Header, rule and rows as aligned lines (first column left-aligned, the others right-aligned)."""
    widths = [max(len(headers[i]), *(len(row[i]) for row in rows)) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(cells)
        ).rstrip()

    return [line(headers), line(["-" * w for w in widths]), *(line(row) for row in rows)]


def http_table_lines(results: Sequence[HttpResult]) -> list[str]:
    """The lines of the table of HTTP results, one row per endpoint."""
    headers = ["endpoint", "requests", "median ms", "p95 ms", "p99 ms", "max ms", "req/s", "non-200"]
    rows = [
        [
            r.endpoint,
            str(r.requests),
            f"{r.median_ms:.3f}",
            f"{r.p95_ms:.3f}",
            f"{r.p99_ms:.3f}",
            f"{r.max_ms:.3f}",
            f"{r.requests_per_s:.0f}",
            str(r.non_200),
        ]
        for r in results
    ]
    return render(headers, rows)


def platform_facts() -> dict[str, str]:
    """Python version and platform, for a report."""
    return {"python": platform.python_version(), "platform": f"{platform.system()} {platform.machine()}"}


def non_200_exit(prog: str, results: Sequence[HttpResult]) -> int:
    """1 after naming the endpoints that answered anything but 200, else 0."""
    failed = [r for r in results if r.non_200]
    if failed:
        names = ", ".join(f"{r.endpoint} ({r.non_200})" for r in failed)
        print(f"{prog}: non-200 answers: {names}", file=sys.stderr)
        return 1
    return 0
