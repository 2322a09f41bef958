"""What the benchmark scripts in bench/ share: a live gpu-advisor server and the reporting of HTTP timings.

- the server: `gpu-advisor serve --workers N` (1 unless asked) as a subprocess on a free port of 127.0.0.1, its
  environment, waiting for `GET /health/ready`, stopping it (terminate, then kill after a timeout), the tail of
  its log, the CPU time of its processes, all behind the `running` context manager, with the command-line
  options that configure it;
- the stores a benchmark may own: a fresh PostgreSQL database (dropped and created again) and a redis-server of
  its own on a free port, which it can kill and start again;
- load: many keep-alive connections at once from one asyncio client (`drive`), every request timed;
- statistics: nearest-rank percentiles, milliseconds, and the summary of one endpoint's timed requests;
- the report: aligned text tables, the HTTP results table, the platform facts and the exit codes.

The scripts run as `uv run python bench/<name>.py`, so this folder is on sys.path and they import it as
`live_server`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
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


def process_tree_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of process `pid` and its live descendants (Linux /proc; None elsewhere)."""
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    total, pending, seen = 0.0, [pid], set()
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        try:
            stat = Path(f"/proc/{current}/stat").read_text()
        except OSError:
            if current == pid:
                return None
            continue
        fields = stat.rsplit(")", 1)[1].split()  # after "pid (comm)": state is fields[0], utime fields[11]
        total += (int(fields[11]) + int(fields[12])) / ticks
        for task in Path(f"/proc/{current}/task").glob("*/children"):
            try:
                pending.extend(int(child) for child in task.read_text().split())
            except OSError:
                continue
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


# --- stores of a benchmark's own --------------------------------------------------------------------------------

POSTGRES_ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
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


def metric_totals(client: httpx.Client, name: str, label: str) -> dict[str, float]:
    """The server's /metrics samples of counter `name`, summed by the value of `label` (empty when unavailable)."""
    try:
        response = client.get("/metrics")
    except httpx.TransportError:
        return {}
    if response.status_code != 200:
        return {}
    pattern = re.compile(rf'^{re.escape(name)}\{{[^}}]*\b{re.escape(label)}="([^"]*)"[^}}]*\}}\s+(\S+)$')
    totals: dict[str, float] = {}
    for line in response.text.splitlines():
        match = pattern.match(line)
        if match:
            totals[match.group(1)] = totals.get(match.group(1), 0.0) + float(match.group(2))
    return totals


# --- load: concurrent requests from one asyncio client ----------------------------------------------------------

ERROR_SAMPLES = 10
CLIENTS = ("aiohttp", "httpx")
AIOHTTP_HINT = "run the script with `uv run --with aiohttp python bench/...` or pass --client httpx"


@dataclass(frozen=True)
class Request:
    """One request of a load: its class for the report, method, path with query, JSON body."""

    label: str
    method: str
    path: str
    body: bytes | None = None


@dataclass
class Load:
    """What `drive` recorded: per request, in completion order, its index, duration, status and end time.

    status 0 is a transport error (connection refused or reset, timeout); `samples` keeps the first failures with
    the request and the answer.
    """

    indexes: list[int] = field(default_factory=list)
    durations_ns: list[int] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    ended_ns: list[int] = field(default_factory=list)  # since started_ns
    samples: list[dict[str, Any]] = field(default_factory=list)
    started_ns: int = 0
    elapsed_ns: int = 0
    client_cpu_s: float = 0.0
    completed: int = 0
    watches: list[tuple[int, asyncio.Event]] = field(default_factory=list)

    @property
    def errors(self) -> int:
        return sum(1 for status in self.statuses if not 200 <= status < 300)

    def reached(self, count: int) -> asyncio.Event:
        """An event set once `count` requests have completed (call it inside the loop that drives the load)."""
        event = asyncio.Event()
        if self.completed >= count:
            event.set()
        else:
            self.watches.append((count, event))
            self.watches.sort(key=lambda watch: watch[0])
        return event

    def done_one(self) -> None:
        self.completed += 1
        while self.watches and self.watches[0][0] <= self.completed:
            self.watches.pop(0)[1].set()

    def note_failure(self, request: Request, status: int, answer: str) -> None:
        """Keep the first failure of each request and status, up to ERROR_SAMPLES of them."""
        sample = {
            "request": f"{request.method} {request.path}",
            "body": request.body.decode() if request.body else None,
            "status": status,
            "answer": answer[:600],
        }
        seen = any(
            s["request"] == sample["request"] and s["body"] == sample["body"] and s["status"] == status
            for s in self.samples
        )
        if not seen and len(self.samples) < ERROR_SAMPLES:
            self.samples.append(sample)


def client_available(name: str) -> bool:
    """Whether the load client library `name` can be imported here."""
    try:
        __import__(name)
    except ImportError:
        return False
    return True


async def drive(
    base_url: str,
    requests: Sequence[Request],
    *,
    connections: int,
    client: str = "aiohttp",
    timeout_s: float = 30.0,
    count: int | None = None,
    duration_s: float | None = None,
    load: Load | None = None,
    on_answer: Callable[[int, int, Mapping[str, str], bytes], None] | None = None,
) -> Load:
    """Send requests[i % len(requests)] for i = 0, 1, ... over `connections` keep-alive connections at once.

    Stops after `count` requests (default len(requests)) or, with duration_s, when that many seconds have passed.
    Every answer is read whole; anything but 2xx is a failure. `load` (fresh when None) is filled as requests
    complete, so that a task running beside this one can watch `load.completed`. `on_answer`, when given, sees
    each answer's request index, status, headers and body (to collect what the server acknowledged).
    """
    load = load or Load()
    total = len(requests) if count is None and duration_s is None else count
    next_index = 0
    headers = {"Content-Type": "application/json"}

    def take() -> int | None:
        nonlocal next_index
        if total is not None and next_index >= total:
            return None
        if deadline_ns is not None and time.perf_counter_ns() >= deadline_ns:
            return None
        index = next_index
        next_index += 1
        return index

    def record(index: int, before: int, status: int, request: Request, failure: str | None) -> None:
        now = time.perf_counter_ns()
        load.indexes.append(index)
        load.durations_ns.append(now - before)
        load.statuses.append(status)
        load.ended_ns.append(now - load.started_ns)
        load.done_one()
        if failure is not None:
            load.note_failure(request, status, failure)

    if client == "aiohttp":
        try:
            import aiohttp
            from yarl import URL
        except ImportError:
            raise BenchError(f"aiohttp is not installed: {AIOHTTP_HINT}") from None
        urls = [URL(base_url + request.path, encoded=True) for request in requests]
        connector = aiohttp.TCPConnector(limit=connections, force_close=False)
        session = aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=timeout_s))

        async def one_aiohttp() -> None:
            while (index := take()) is not None:
                slot = index % len(requests)
                request = requests[slot]
                before = time.perf_counter_ns()
                try:
                    async with session.request(
                        request.method, urls[slot], data=request.body, headers=headers if request.body else None
                    ) as response:
                        text = await response.read()
                        status = response.status
                        if on_answer is not None:
                            on_answer(index, status, response.headers, text)
                except (aiohttp.ClientError, OSError, TimeoutError) as error:
                    record(index, before, 0, request, f"{type(error).__name__}: {error}")
                    continue
                record(index, before, status, request, None if 200 <= status < 300 else text.decode(errors="replace"))

        worker = one_aiohttp
        close = session.close
    elif client == "httpx":
        limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
        async_client = httpx.AsyncClient(base_url=base_url, limits=limits, timeout=timeout_s)

        async def one_httpx() -> None:
            while (index := take()) is not None:
                request = requests[index % len(requests)]
                before = time.perf_counter_ns()
                try:
                    response = await async_client.request(
                        request.method, request.path, content=request.body, headers=headers if request.body else None
                    )
                except httpx.TransportError as error:
                    record(index, before, 0, request, f"{type(error).__name__}: {error}")
                    continue
                status = response.status_code
                if on_answer is not None:
                    on_answer(index, status, response.headers, response.content)
                record(index, before, status, request, None if 200 <= status < 300 else response.text)

        worker = one_httpx
        close = async_client.aclose
    else:
        raise BenchError(f"unknown client {client!r} (one of {', '.join(CLIENTS)})")

    cpu_before = time.process_time()
    load.started_ns = time.perf_counter_ns()
    deadline_ns = load.started_ns + int(duration_s * 1e9) if duration_s is not None else None
    try:
        await asyncio.gather(*(worker() for _ in range(connections)))
    finally:
        load.elapsed_ns = time.perf_counter_ns() - load.started_ns
        load.client_cpu_s = time.process_time() - cpu_before
        await close()
    return load


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


def print_outcome(outcome: dict[str, Any], text_report: Callable[[dict[str, Any]], str], as_json: bool) -> None:
    """Print a finished run: the text report, or JSON on stdout with the text on stderr."""
    report = text_report(outcome)
    if as_json:
        print(report, file=sys.stderr)
        print(json.dumps(outcome, indent=2))
    else:
        print(report)
