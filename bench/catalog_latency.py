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
import random
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import httpx

from bench import figures, servers

GPU_IDS = ["h100-sxm", "h200", "mi300x", "l40s", "b200", "H100 SXM5"]
ALIAS_TARGETS = {"H100 SXM5": "h100-sxm"}
COLD_SORTS = ["name", "memory_gb", "bandwidth", "bf16_tflops", "price"]
COLD_ORDERS: list[str | None] = [None, "asc", "desc"]
MAX_COLD_REQUESTS = 5000  # keeps every generated combination distinct (see cold_paths)

REQUEST_TIMEOUT_S = 10.0


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
        raise servers.BenchError(f"GET /v1/gpus answered {listing.status_code}: {listing.text[:300]}")
    for gpu_id in GPU_IDS:
        response = client.get(f"/v1/gpus/{quote(gpu_id, safe='')}")
        expected = ALIAS_TARGETS.get(gpu_id, gpu_id)
        if response.status_code != 200 or response.json().get("id") != expected:
            raise servers.BenchError(f"GET /v1/gpus/{gpu_id} answered {response.status_code}: {response.text[:300]}")


def measure(client: httpx.Client, endpoint: str, paths: Sequence[str]) -> figures.HttpResult:
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
    return figures.summarize(endpoint, durations_ns, elapsed_ns, non_200)


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


def table(results: Sequence[figures.HttpResult], meta: dict[str, Any]) -> str:
    out = [
        f"gpu-advisor catalog latency: 1 worker, warm, sequential keep-alive requests "
        f"(database: {meta['database']}, cache: {meta['cache']}, catalog {meta['catalog_version']})",
        *figures.http_table_lines(results),
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
    servers.add_server_options(parser)
    parser.add_argument("--json", action="store_true", help="print JSON on stdout (the table goes to stderr)")
    args = parser.parse_args(argv)
    if not 1 <= args.requests <= 1_000_000:
        parser.error("--requests must be between 1 and 1000000")
    if not 0 <= args.warmup <= 100_000:
        parser.error("--warmup must be between 0 and 100000")
    if not 0 <= args.cold_requests <= MAX_COLD_REQUESTS:
        parser.error(f"--cold-requests must be between 0 and {MAX_COLD_REQUESTS}")
    servers.check_server_options(parser, args)
    return args


def run(args: argparse.Namespace, workdir: Path) -> tuple[list[figures.HttpResult], dict[str, Any]]:
    with servers.running(
        workdir, database_url=args.database_url, redis_url=args.redis_url, port=args.port, timeout_s=REQUEST_TIMEOUT_S
    ) as server:
        client = server.client
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
    meta = {
        **server.facts("catalog_version"),
        "warmup_per_endpoint": args.warmup,
        "cold_cache_misses": misses,
        **figures.platform_facts(),
    }
    return results, meta


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    servers.exit_on_sigterm()
    outcome = servers.run_in_workdir("catalog_latency", lambda workdir: run(args, workdir))
    if isinstance(outcome, int):
        return outcome
    results, meta = outcome
    report = table(results, meta)
    if args.json:
        print(report, file=sys.stderr)
        print(json.dumps({"meta": meta, "results": [asdict(r) for r in results]}, indent=2))
    else:
        print(report)
    return figures.non_200_exit("catalog_latency", results)


if __name__ == "__main__":
    sys.exit(main())
