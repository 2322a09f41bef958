"""Latency of the catalog reads on a live gpu-advisor server with one warm worker.

Run from the repository root:

    uv run python bench/catalog_latency.py                  # fresh SQLite file, in-process cache
    uv run python bench/catalog_latency.py --requests 5000 --json
    uv run python bench/catalog_latency.py \\
        --database-url postgresql+asyncpg://gpu_advisor:gpu_advisor@127.0.0.1:5432/gpu_advisor \\
        --redis-url redis://127.0.0.1:6379/0

What it does:

1. starts `gpu-advisor serve --workers 1` on a free port of 127.0.0.1 as a subprocess; without
   `--database-url` the server gets a fresh SQLite file in a temporary directory (serve migrates and seeds it),
   without `--redis-url` it uses its in-process cache (an inherited REDIS_URL is dropped so runs compare);
2. waits for `GET /health/ready` (bounded number of tries);
3. warms up each endpoint, then sends sequential requests over one keep-alive connection and records each
   request's wall time with `time.perf_counter_ns`:
   - `GET /v1/gpus` (the same query each time: a cache hit after the first request),
   - `GET /v1/gpus/{id}` cycling over ids and an alias (`H100 SXM5`, URL-encoded),
   - `GET /v1/gpus?sort=...&min_memory_gb=...` with query combinations never requested before: every request
     is a response-cache miss that builds and encodes the page (reported separately as "cold");
4. prints median, p95, p99, max (milliseconds), requests per second and non-200 answers per endpoint, as a
   table or, with `--json`, as JSON on stdout (the table then goes to stderr);
5. stops the server (terminate, then kill after a timeout), also on errors and Ctrl-C.

It exits 1 when any measured request does not answer 200, and 2 when the server does not come up.
Figures include the client's own time (httpx, one connection, no pipelining); the server's log level defaults
to WARNING (override with GPU_ADVISOR_LOG_LEVEL) so per-request access logging does not dominate.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import httpx

REPO_ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"

GPU_IDS = ["h100-sxm", "h200", "mi300x", "l40s", "b200", "H100 SXM5"]
ALIAS_TARGETS = {"H100 SXM5": "h100-sxm"}
COLD_SORTS = ["name", "memory_gb", "bandwidth", "bf16_tflops", "price"]
COLD_ORDERS: list[str | None] = [None, "asc", "desc"]
MAX_COLD_REQUESTS = 5000  # keeps every generated combination distinct (see cold_paths)

READY_TRIES = 150
READY_INTERVAL_S = 0.2
STOP_TIMEOUT_S = 10.0
REQUEST_TIMEOUT_S = 10.0


class BenchError(RuntimeError):
    """The benchmark cannot run (the server did not start or answered something unexpected)."""


@dataclass(frozen=True)
class Result:
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
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def server_env(database_url: str, redis_url: str | None) -> dict[str, str]:
    env = dict(os.environ)
    env["DATABASE_URL"] = database_url
    env.pop("REDIS_URL", None)
    if redis_url:
        env["REDIS_URL"] = redis_url
    env.setdefault("GPU_ADVISOR_LOG_LEVEL", "WARNING")
    # One worker: metrics come from the process registry, which the cold-query miss count reads.
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    return env


def start_server(port: int, env: dict[str, str], log_path: Path, *, migrate: bool) -> subprocess.Popen[bytes]:
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
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=STOP_TIMEOUT_S)


def log_tail(log_path: Path, lines: int = 30) -> str:
    try:
        text = log_path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no server output)"
    return "\n".join(text.splitlines()[-lines:]) or "(no server output)"


def wait_until_ready(client: httpx.Client, process: subprocess.Popen[bytes], log_path: Path) -> dict[str, Any]:
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


# --- the requests -----------------------------------------------------------------------------------------------


def gpu_paths(count: int) -> list[str]:
    """`count` detail paths cycling over GPU_IDS (the alias URL-encoded)."""
    return [f"/v1/gpus/{quote(GPU_IDS[index % len(GPU_IDS)], safe='')}" for index in range(count)]


def cold_paths(count: int, salt: float) -> list[str]:
    """`count` distinct list queries (distinct query strings are distinct response-cache keys).

    `salt` (0 < salt < 0.5, random per run) shifts every min_memory_gb so that a shared Redis that kept the
    previous run's entries (same catalog version) still misses.
    """
    paths = []
    combos = len(COLD_SORTS) * len(COLD_ORDERS)
    for index in range(count):
        sort = COLD_SORTS[index % len(COLD_SORTS)]
        order = COLD_ORDERS[(index // len(COLD_SORTS)) % len(COLD_ORDERS)]
        step = index // combos
        # 0, 4, ... 296 GB, then the same range shifted by 0.5 GB, 1 GB, ...: distinct for step < 600.
        min_memory_gb = (step % 75) * 4 + (step // 75) * 0.5 + salt
        query: dict[str, str] = {"sort": sort, "min_memory_gb": f"{min_memory_gb:.3f}"}
        if order:
            query["order"] = order
        paths.append(f"/v1/gpus?{urlencode(query)}")
    assert len(set(paths)) == len(paths)
    return paths


def check_answers(client: httpx.Client) -> None:
    """Fail early when the catalog does not answer what the benchmark expects to measure."""
    listing = client.get("/v1/gpus")
    if listing.status_code != 200 or not listing.json().get("items"):
        raise BenchError(f"GET /v1/gpus answered {listing.status_code}: {listing.text[:300]}")
    for gpu_id in GPU_IDS:
        response = client.get(f"/v1/gpus/{quote(gpu_id, safe='')}")
        expected = ALIAS_TARGETS.get(gpu_id, gpu_id)
        if response.status_code != 200 or response.json().get("id") != expected:
            raise BenchError(f"GET /v1/gpus/{gpu_id} answered {response.status_code}: {response.text[:300]}")


def measure(client: httpx.Client, endpoint: str, paths: Sequence[str]) -> Result:
    durations_ns: list[int] = []
    non_200 = 0
    started = time.perf_counter_ns()
    for path in paths:
        before = time.perf_counter_ns()
        response = client.get(path)
        durations_ns.append(time.perf_counter_ns() - before)
        if response.status_code != 200:
            non_200 += 1
    elapsed_ns = time.perf_counter_ns() - started
    return summarize(endpoint, durations_ns, elapsed_ns, non_200)


def percentile(ordered: Sequence[int], percent: int) -> int:
    """Nearest-rank percentile of an ascending sequence (integer ceiling: no float rounding)."""
    rank = max(1, -(-len(ordered) * percent // 100))
    return ordered[rank - 1]


def summarize(endpoint: str, durations_ns: list[int], elapsed_ns: int, non_200: int) -> Result:
    ordered = sorted(durations_ns)
    ms = 1e-6
    return Result(
        endpoint=endpoint,
        requests=len(ordered),
        median_ms=round(statistics.median(ordered) * ms, 3),
        p95_ms=round(percentile(ordered, 95) * ms, 3),
        p99_ms=round(percentile(ordered, 99) * ms, 3),
        max_ms=round(ordered[-1] * ms, 3),
        requests_per_s=round(len(ordered) / (elapsed_ns / 1e9), 1),
        non_200=non_200,
    )


def cache_lookups(client: httpx.Client) -> dict[str, float]:
    """Response-cache lookups by result, from the server's /metrics (empty when unavailable)."""
    try:
        response = client.get("/metrics")
    except httpx.TransportError:
        return {}
    totals: dict[str, float] = {}
    pattern = re.compile(r'^gpu_advisor_cache_lookups_total\{[^}]*result="(\w+)"[^}]*\}\s+(\S+)$')
    for line in response.text.splitlines():
        match = pattern.match(line)
        if match:
            totals[match.group(1)] = totals.get(match.group(1), 0.0) + float(match.group(2))
    return totals


# --- the report -------------------------------------------------------------------------------------------------


def table(results: Sequence[Result], meta: dict[str, Any]) -> str:
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
    widths = [max(len(headers[i]), *(len(row[i]) for row in rows)) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(cells)
        ).rstrip()

    out = [
        f"gpu-advisor catalog latency: 1 worker, warm, sequential keep-alive requests "
        f"(database: {meta['database']}, cache: {meta['cache']}, catalog {meta['catalog_version']})",
        line(headers),
        line(["-" * w for w in widths]),
        *(line(row) for row in rows),
    ]
    if meta.get("cold_cache_misses") is not None:
        out.append(f"cold queries: {meta['cold_cache_misses']:.0f} response-cache misses recorded by the server")
    out.append(f"python {meta['python']} on {meta['platform']}")
    return "\n".join(out)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--requests", type=int, default=2000, help="measured requests per endpoint (default 2000)")
    parser.add_argument("--warmup", type=int, default=200, help="warm-up requests per endpoint (default 200)")
    parser.add_argument(
        "--cold-requests",
        type=int,
        default=500,
        help=f"distinct never-requested list queries (default 500, at most {MAX_COLD_REQUESTS})",
    )
    parser.add_argument("--database-url", help="DATABASE_URL for the server (default: a fresh SQLite file)")
    parser.add_argument("--redis-url", help="REDIS_URL for the server (default: none, in-process cache)")
    parser.add_argument("--port", type=int, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--json", action="store_true", help="print JSON on stdout (the table goes to stderr)")
    args = parser.parse_args(argv)
    if not 1 <= args.requests <= 1_000_000:
        parser.error("--requests must be between 1 and 1000000")
    if not 0 <= args.warmup <= 100_000:
        parser.error("--warmup must be between 0 and 100000")
    if not 0 <= args.cold_requests <= MAX_COLD_REQUESTS:
        parser.error(f"--cold-requests must be between 0 and {MAX_COLD_REQUESTS}")
    if args.port is not None and not 1 <= args.port <= 65535:
        parser.error("--port must be between 1 and 65535")
    return args


def _raise_on_sigterm(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


def run(args: argparse.Namespace, workdir: Path) -> tuple[list[Result], dict[str, Any]]:
    database_url = args.database_url or f"sqlite+aiosqlite:///{workdir / 'bench.db'}"
    port = args.port or free_port()
    log_path = workdir / "server.log"
    process = start_server(port, server_env(database_url, args.redis_url), log_path, migrate=not args.database_url)
    try:
        with httpx.Client(base_url=f"http://{HOST}:{port}", timeout=REQUEST_TIMEOUT_S) as client:
            ready = wait_until_ready(client, process, log_path)
            check_answers(client)

            for path in ["/v1/gpus"] * args.warmup + gpu_paths(args.warmup):
                client.get(path)

            results = [
                measure(client, "GET /v1/gpus", ["/v1/gpus"] * args.requests),
                measure(client, "GET /v1/gpus/{id}", gpu_paths(args.requests)),
            ]
            misses = None
            if args.cold_requests:
                before = cache_lookups(client)
                salt = random.randrange(1, 500) / 1000
                results.append(
                    measure(client, "GET /v1/gpus?sort&min_memory_gb (cold)", cold_paths(args.cold_requests, salt))
                )
                after = cache_lookups(client)
                if "miss" in after:
                    misses = after["miss"] - before.get("miss", 0.0)
            if process.poll() is not None:
                raise BenchError(f"the server exited during the run:\n{log_tail(log_path)}")
    finally:
        stop_server(process)
    meta = {
        "database": database_url.split("://")[0],
        "cache": f"redis ({ready.get('redis')})" if args.redis_url else "in-process",
        "catalog_version": ready.get("catalog_version"),
        "ready_status": ready.get("status"),
        "workers": 1,
        "warmup_per_endpoint": args.warmup,
        "cold_cache_misses": misses,
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
    }
    return results, meta


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _raise_on_sigterm)
    with tempfile.TemporaryDirectory(prefix="gpu-advisor-bench-") as tmp:
        try:
            results, meta = run(args, Path(tmp))
        except BenchError as error:
            print(f"catalog_latency: {error}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("catalog_latency: interrupted; the server was stopped", file=sys.stderr)
            return 130
    report = table(results, meta)
    if args.json:
        print(report, file=sys.stderr)
        print(json.dumps({"meta": meta, "results": [asdict(r) for r in results]}, indent=2))
    else:
        print(report)
    failed = [r for r in results if r.non_200]
    if failed:
        names = ", ".join(f"{r.endpoint} ({r.non_200})" for r in failed)
        print(f"catalog_latency: non-200 answers: {names}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
