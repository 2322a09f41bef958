"""Throughput and latency of a multi-worker gpu-advisor under a realistic mix of requests, on PostgreSQL and Redis.

Run from the repository root (the default client is aiohttp, which is not a project dependency, hence `--with`):

    uv run --with aiohttp python bench/load.py                 # 2 workers, 64 connections, 20000 requests
    uv run --with aiohttp python bench/load.py --kill-redis    # its Redis killed at 1/3, started again at 2/3
    uv run --with aiohttp python bench/load.py --workers 4 --connections 128 --requests 50000 --json
    uv run python bench/load.py --client httpx                 # no extra package, but a far slower client
    uv run --with aiohttp python bench/load.py \\
        --database-url postgresql+asyncpg://gpu_advisor:gpu_advisor@127.0.0.1:5432/gpu_advisor \\
        --redis-url redis://127.0.0.1:6379/0

What it does:

1. the stores: without `--database-url` it drops and creates the database `--database-name` (default
   gpu_advisor_bench) through `--postgres-admin-url` (default postgresql://postgres@127.0.0.1:5432/postgres) and
   drops it again at the end (`--keep-database` keeps it); without `--redis-url` it starts a redis-server of its
   own on a free port of 127.0.0.1, without persistence (Debian: `apt-get install -y redis-server`);
2. starts `gpu-advisor serve --workers N` (default 2; uvicorn) on a free port, migrating and seeding the fresh
   database, with GPU_ADVISOR_RATE_LIMIT_PER_MINUTE=0 (one load client must not be throttled),
   GPU_ADVISOR_LOG_LEVEL=WARNING and PROMETHEUS_MULTIPROC_DIR as in the container image; waits for
   `GET /health/ready`;
3. sends every distinct repeated request below once, sequentially, and fails unless each answers 200 (the ids
   of the recommendations are kept for `GET /v1/recommendations/{id}`), then `--warmup` requests of the mix
   without the unique recommendations, concurrently;
4. measures `--requests` requests (default 20000) of the mix, in an order shuffled with `--seed`, over
   `--connections` keep-alive connections at once (default 64; the client keeps that many requests in flight),
   every request timed from send to the last byte of the answer:

   | class                               | share | what                                                        |
   | ----------------------------------- | ----- | ----------------------------------------------------------- |
   | GET /v1/gpus?filters                |  14 % | 10 filter, sort and paging combinations                     |
   | GET /v1/gpus/{id}                   |  12 % | 8 ids and aliases                                           |
   | GET /v1/gpus/compare                |   6 % | 4 lists of 2-4 GPUs                                         |
   | GET /v1/offers                      |   8 % | 6 filter combinations                                       |
   | GET /v1/models                      |   4 % | all, llm, diffusion, one model                              |
   | GET /v1/systems                     |   4 % | the list and one system                                     |
   | POST /v1/recommendations (repeated) |  20 % | 10 bodies, every kind: cached answers                       |
   | POST /v1/recommendations (unique)   |   6 % | bodies never sent before, every kind: computed and stored   |
   | GET /v1/recommendations/{id}        |  12 % | the ids of the repeated bodies                              |
   | POST /v1/estimates                  |   8 % | 5 bodies, every kind                                        |
   | POST /v1/tco                        |   6 % | 4 bodies                                                    |

   The unique bodies vary a workload figure and carry an unreachable `max_usd_per_hour` budget drawn per run
   (it changes the id, not the answer), so no earlier run and no other worker has them cached or stored;
5. with `--kill-redis` (its own redis-server only): SIGKILLs redis-server once a third of the requests have
   completed and starts it again, empty, on the same port at two thirds; figures are also reported for the
   three phases (Redis up, down, back) by the time each request ended;
6. after the run, asks `/health/ready` over fresh connections (so that every worker is likely asked) until
   all of 4 x workers answers in a row say `redis: ok` (20 s at most);
7. reports throughput (requests per second over the whole run), median, p95, p99 and max latency in
   milliseconds overall and per class, errors (any answer but 2xx, and any transport error: refused, reset,
   timed out), the first failed requests with their answers, lines of the server's log that name an error,
   response-cache lookups by result from `/metrics`, and the CPU seconds of the client (this process) and of
   the server's processes: on a 2-core machine the client competes with the server for the cores;
8. stops the server, its redis-server and drops its database, also on errors and Ctrl-C.

`--json` prints a JSON document on stdout (the report then goes to stderr). It exits 1 when any measured or
warm-up request fails or `/health/ready` does not say `redis: ok` at the end, and 2 when the benchmark cannot run
(the server does not come up, a store is unreachable, a check request answers something unexpected).

The client: one asyncio process. Measured on this 2-core machine against 2 workers (64 connections),
httpx.AsyncClient spent 2-3 ms of CPU per request and reached about 300 requests/s, the client itself being the
bottleneck; aiohttp spent 0.1-0.2 ms per request and reached 2,000-4,000 requests/s on `/health/live`. So
aiohttp is the default, and `--client httpx` is there for a machine without it.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx

from bench import figures, load_client, servers, stores
from bench.load_report import report_document, text_report
from bench.load_requests import (
    MIX,
    REC_UNIQUE,
    checked_pools,
    class_counts,
    plan,
    unique_recommendations,
)
from bench.recommend_latency import UNREACHABLE_BUDGET_USD

REQUEST_TIMEOUT_S = 30.0
READY_CHECKS_PER_WORKER = 4
READY_DEADLINE_S = 20.0
SERVER_ENV = {"GPU_ADVISOR_RATE_LIMIT_PER_MINUTE": "0", "GPU_ADVISOR_LOG_LEVEL": "WARNING"}
LOG_ERROR_MARKERS = ("ERROR", "Traceback", "CRITICAL")


assert sum(MIX.values()) == 100


# --- the requests -----------------------------------------------------------------------------------------------


# --- the run ----------------------------------------------------------------------------------------------------


async def measured_run(
    server: servers.LiveServer,
    requests: list[load_client.Request],
    args: argparse.Namespace,
    redis: stores.RedisServer | None,
) -> tuple[load_client.Load, list[dict[str, Any]]]:
    """The load, and with --kill-redis the kill and restart events (when, after how many completed requests)."""
    load = load_client.Load()
    events: list[dict[str, Any]] = []

    def event(name: str) -> None:
        at_ns = time.perf_counter_ns() - load.started_ns
        events.append({"event": name, "at_s": round(at_ns / 1e9, 3), "at_ns": at_ns, "completed": load.completed})

    async def chaos(own: stores.RedisServer) -> None:
        for fraction, name, action in [(1, "redis killed", own.kill), (2, "redis started", own.start)]:
            await load.reached(len(requests) * fraction // 3).wait()
            event(f"{name} (begin)")
            await asyncio.to_thread(action)
            event(name)

    drive = asyncio.create_task(
        load_client.drive(
            server.url,
            requests,
            connections=args.connections,
            client=args.client,
            timeout_s=REQUEST_TIMEOUT_S,
            load=load,
        )
    )
    if not (args.kill_redis and redis is not None):
        await drive
        return load, events
    chaos_task = asyncio.create_task(chaos(redis))
    await drive
    try:  # both marks were passed, but a restart may still be waiting for PING; raises what the kill or start raised
        await asyncio.wait_for(chaos_task, timeout=30.0)
    except TimeoutError:
        raise servers.BenchError("redis-server was not started again within 30 s of the run's end") from None
    return load, events


def ready_again(base_url: str, checks: int, deadline_s: float) -> dict[str, Any]:
    """Ask /health/ready over fresh connections until `checks` answers in a row say redis ok, or time runs out."""
    started = time.monotonic()
    streak, asked, last = 0, 0, None
    while time.monotonic() - started < deadline_s:
        asked += 1
        try:
            with httpx.Client(base_url=base_url, timeout=5.0) as client:  # a new connection each time
                response = client.get("/health/ready", headers={"Connection": "close"})
            last = {"status_code": response.status_code, **response.json()}
        except (httpx.TransportError, ValueError) as error:
            last = {"error": f"{type(error).__name__}: {error}"}
        if last.get("status_code") == 200 and last.get("redis") in ("ok", "local"):
            streak += 1
            if streak >= checks:
                break
        else:
            streak = 0
            time.sleep(0.2)
    return {
        "redis_ok": streak >= checks,
        "answers_in_a_row": streak,
        "asked": asked,
        "seconds": round(time.monotonic() - started, 3),
        "last": last,
    }


def log_errors(log_path: Path | None, skip_lines: int) -> tuple[int, list[str]]:
    """How many lines of the server's log after `skip_lines` name an error, and the first of them."""
    if log_path is None or not log_path.exists():
        return 0, []
    lines = log_path.read_text(encoding="utf-8", errors="replace").splitlines()[skip_lines:]
    hits = [line for line in lines if any(marker in line for marker in LOG_ERROR_MARKERS)]
    return len(hits), hits[:10]


def log_length(log_path: Path | None) -> int:
    if log_path is None or not log_path.exists():
        return 0
    return len(log_path.read_text(encoding="utf-8", errors="replace").splitlines())


def run(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    rng = random.Random(args.seed)
    budget = UNREACHABLE_BUDGET_USD + random.randrange(1, 1_000_000) / 1000  # per run, not per seed
    unique_count = class_counts(args.requests, MIX).get(REC_UNIQUE, 0)

    with ExitStack() as stack:
        database_url = args.database_url or stack.enter_context(
            stores.fresh_postgres_database(args.postgres_admin_url, args.database_name, keep=args.keep_database)
        )
        redis = None if args.redis_url else stack.enter_context(stores.own_redis(workdir))
        redis_url = args.redis_url or (redis.url if redis else None)
        server = stack.enter_context(
            servers.running(
                workdir,
                database_url=database_url,
                redis_url=redis_url,
                port=args.port,
                timeout_s=REQUEST_TIMEOUT_S,
                workers=args.workers,
                extra_env=SERVER_ENV,
                migrate=not args.database_url,
            )
        )
        print(
            f"server ready: {args.workers} workers on {server.url} "
            f"(database {database_url.rsplit('@', 1)[-1]}, redis {redis_url}); checking the requests",
            file=sys.stderr,
            flush=True,
        )
        pools = checked_pools(server.client)
        pools[REC_UNIQUE] = unique_recommendations(unique_count, budget)

        warmup = None
        if args.warmup:
            warm_mix = {label: share for label, share in MIX.items() if label != REC_UNIQUE}
            warm_plan = plan(args.warmup, pools, warm_mix, random.Random(args.seed + 1))
            warmup = asyncio.run(
                load_client.drive(
                    server.url, warm_plan, connections=args.connections, client=args.client, timeout_s=REQUEST_TIMEOUT_S
                )
            )
        server.check_alive()

        requests = plan(args.requests, pools, MIX, rng)
        lookups_before = figures.metric_totals(server.client, "gpu_advisor_cache_lookups_total", "result")
        cache_errors_before = figures.metric_totals(server.client, "gpu_advisor_cache_errors_total", "backend")
        log_skip = log_length(server.log_path)
        server_cpu_before = server.cpu_s()
        print(
            f"measuring {args.requests} requests over {args.connections} connections"
            + (" (Redis killed at 1/3, started again at 2/3)" if args.kill_redis else ""),
            file=sys.stderr,
            flush=True,
        )
        load, events = asyncio.run(measured_run(server, requests, args, redis))
        server_cpu_after = server.cpu_s()
        server.check_alive()
        ready = ready_again(server.url, READY_CHECKS_PER_WORKER * args.workers, READY_DEADLINE_S)
        lookups_after = figures.metric_totals(server.client, "gpu_advisor_cache_lookups_total", "result")
        cache_errors_after = figures.metric_totals(server.client, "gpu_advisor_cache_errors_total", "backend")
        error_lines, first_error_lines = log_errors(server.log_path, log_skip)
        facts = server.facts("catalog_version")

    meta = {
        **facts,
        "database": database_url.split("://")[0],
        "database_location": database_url.rsplit("@", 1)[-1],
        "database_fresh": not args.database_url,
        "cache": "redis (own redis-server)" if redis else ("redis" if redis_url else "in-process"),
        "client": args.client,
        "connections": args.connections,
        "requests": args.requests,
        "warmup": args.warmup,
        "seed": args.seed,
        "kill_redis": args.kill_redis,
        "unique_budget_usd_per_hour": budget,
        **figures.platform_facts(),
    }
    return report_document(
        meta,
        requests,
        load,
        events,
        warmup,
        ready,
        cache={
            "lookups": {k: v - lookups_before.get(k, 0.0) for k, v in lookups_after.items()},
            "errors": {k: v - cache_errors_before.get(k, 0.0) for k, v in cache_errors_after.items()},
        },
        server_cpu_s=(
            round(server_cpu_after - server_cpu_before, 2)
            if server_cpu_after is not None and server_cpu_before is not None
            else None
        ),
        log={"error_lines": error_lines, "first": first_error_lines},
    )


# --- the report -------------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--requests", type=int, default=20_000, help="measured requests (default 20000)")
    parser.add_argument("--connections", type=int, default=64, help="connections at once (default 64)")
    parser.add_argument("--warmup", type=int, default=2000, help="warm-up requests (default 2000)")
    parser.add_argument("--workers", type=int, default=2, help="server worker processes (default 2)")
    parser.add_argument("--seed", type=int, default=1, help="order of the requests (default 1)")
    parser.add_argument(
        "--client",
        choices=load_client.CLIENTS,
        default="aiohttp",
        help="HTTP client library (default aiohttp: needs `uv run --with aiohttp`)",
    )
    parser.add_argument(
        "--kill-redis",
        action="store_true",
        help="kill the benchmark's redis-server at 1/3 of the run and start it again at 2/3",
    )
    servers.add_server_options(
        parser,
        database_help="DATABASE_URL for the server, used as it is (default: a fresh database, see --database-name)",
        redis_help="REDIS_URL for the server (default: a redis-server of the benchmark's own on a free port)",
    )
    stores.add_fresh_database_options(parser, name="gpu_advisor_bench", when="without --database-url")
    parser.add_argument("--keep-database", action="store_true", help="do not drop the fresh database at the end")
    parser.add_argument("--json", action="store_true", help="print JSON on stdout (the report goes to stderr)")
    args = parser.parse_args(argv)
    if not 100 <= args.requests <= 10_000_000:
        parser.error("--requests must be between 100 and 10000000")
    if not 1 <= args.connections <= 1024:
        parser.error("--connections must be between 1 and 1024")
    if not 0 <= args.warmup <= 1_000_000:
        parser.error("--warmup must be between 0 and 1000000")
    if not 1 <= args.workers <= 64:
        parser.error("--workers must be between 1 and 64")
    if args.kill_redis and args.redis_url:
        parser.error("--kill-redis needs the benchmark's own redis-server: drop --redis-url")
    servers.check_server_options(parser, args)
    if args.client == "aiohttp" and not load_client.client_available("aiohttp"):
        parser.error(f"aiohttp is not installed: {load_client.AIOHTTP_HINT}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    servers.exit_on_sigterm()
    outcome = servers.run_in_workdir("load", lambda workdir: run(args, workdir))
    if isinstance(outcome, int):
        return outcome
    figures.print_outcome(outcome, text_report, args.json)
    failed = outcome["overall"]["errors"] + (outcome["warmup"]["errors"] if outcome["warmup"] else 0)
    if failed:
        print(f"load: {failed} requests failed (any answer but 2xx, or a transport error)", file=sys.stderr)
    if not outcome["ready_after"]["redis_ok"]:
        print("load: /health/ready did not say redis ok after the run", file=sys.stderr)
    return 1 if failed or not outcome["ready_after"]["redis_ok"] else 0


if __name__ == "__main__":
    sys.exit(main())
