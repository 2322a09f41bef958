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
import json
import random
import statistics
import sys
import time
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import httpx
from recommend_latency import UNREACHABLE_BUDGET_USD, WORKLOADS

from api.openapi import examples
from bench import figures, load_client, servers, stores

REQUEST_TIMEOUT_S = 30.0
READY_CHECKS_PER_WORKER = 4
READY_DEADLINE_S = 20.0
SERVER_ENV = {"GPU_ADVISOR_RATE_LIMIT_PER_MINUTE": "0", "GPU_ADVISOR_LOG_LEVEL": "WARNING"}
LOG_ERROR_MARKERS = ("ERROR", "Traceback", "CRITICAL")

GPUS = "GET /v1/gpus?filters"
GPU = "GET /v1/gpus/{id}"
COMPARE = "GET /v1/gpus/compare"
OFFERS = "GET /v1/offers"
MODELS = "GET /v1/models"
SYSTEMS = "GET /v1/systems"
REC_REPEATED = "POST /v1/recommendations (repeated)"
REC_UNIQUE = "POST /v1/recommendations (unique)"
REC_GET = "GET /v1/recommendations/{id}"
ESTIMATES = "POST /v1/estimates"
TCO = "POST /v1/tco"

MIX: dict[str, int] = {  # request class: share in percent (the table of the docstring)
    GPUS: 14,
    GPU: 12,
    COMPARE: 6,
    OFFERS: 8,
    MODELS: 4,
    SYSTEMS: 4,
    REC_REPEATED: 20,
    REC_UNIQUE: 6,
    REC_GET: 12,
    ESTIMATES: 8,
    TCO: 6,
}
assert sum(MIX.values()) == 100

GPU_QUERIES: list[dict[str, Any]] = [
    {},
    {"vendor": "nvidia"},
    {"vendor": "amd", "sort": "memory_gb"},
    {"min_memory_gb": 80, "sort": "price"},
    {"ecosystem": "cuda", "supports": "fp8", "sort": "bf16_tflops", "order": "desc"},
    {"segment": "datacenter", "sort": "bandwidth", "limit": 10},
    {"supports": "nvlink", "min_memory_gb": 141},
    {"segment": "consumer", "sort": "price", "order": "asc"},
    {"ecosystem": "rocm"},
    {"sort": "name", "limit": 20, "offset": 20},
]
GPU_IDS = ["h100-sxm", "h200", "mi300x", "l40s", "b200", "a100-sxm-80gb", "H100 SXM5", "rtx-4090"]
COMPARE_IDS = ["h100-sxm,h200,mi300x", "h100-sxm,b200", "a100-sxm-80gb,h100-sxm,h200,b200", "l40s,rtx-4090"]
OFFER_QUERIES: list[dict[str, Any]] = [
    {"gpu": "h100-sxm"},
    {"gpu": "h200", "pricing": "on_demand"},
    {"provider": "runpod", "sort": "price"},
    {"pricing": "spot", "max_usd_per_gpu_hour": 3.5},
    {"gpu": "mi300x", "sort": "as_of"},
    {"max_age_days": 365, "limit": 20},
]
MODEL_PATHS = ["/v1/models", "/v1/models?kind=llm", "/v1/models?kind=diffusion", "/v1/models/deepseek-r1"]
SYSTEM_PATHS = ["/v1/systems", "/v1/systems/dgx-h100"]
ESTIMATE_BODIES: list[dict[str, Any]] = [
    *examples.ESTIMATE_REQUESTS.values(),
    {
        "workload": {"kind": "training", "model": "llama-3.1-8b", "train_tokens": 1e10},
        "gpu": "h100-sxm",
        "gpu_count": 8,
    },
    {
        "workload": {"kind": "fine_tuning", "model": "llama-3.1-70b", "method": "qlora", "train_tokens": 1e8},
        "gpu": "a100-sxm-80gb",
        "gpu_count": 2,
    },
    {"workload": {"kind": "image_generation", "model": "sdxl", "images_per_hour": 1000}, "gpu": "l40s", "gpu_count": 1},
]
TCO_BODIES: list[dict[str, Any]] = [
    *examples.TCO_REQUESTS.values(),
    {"gpu": "mi300x", "gpu_count": 8, "years": 4, "utilization": 0.8},
    {"system": "dgx-h100", "years": 3, "utilization": 0.5, "electricity_usd_per_kwh": 0.15},
]


# --- the requests -----------------------------------------------------------------------------------------------


def encode(body: dict[str, Any]) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()


def repeated_requests() -> dict[str, list[load_client.Request]]:
    """The distinct requests of every class but the unique recommendations and the GETs by id."""
    rec_bodies = [*examples.REQUESTS.values(), *(body for _, body in WORKLOADS)]
    return {
        GPUS: [load_client.Request(GPUS, "GET", f"/v1/gpus?{urlencode(q)}" if q else "/v1/gpus") for q in GPU_QUERIES],
        GPU: [load_client.Request(GPU, "GET", f"/v1/gpus/{quote(gpu_id, safe='')}") for gpu_id in GPU_IDS],
        COMPARE: [load_client.Request(COMPARE, "GET", f"/v1/gpus/compare?ids={ids}") for ids in COMPARE_IDS],
        OFFERS: [load_client.Request(OFFERS, "GET", f"/v1/offers?{urlencode(q)}") for q in OFFER_QUERIES],
        MODELS: [load_client.Request(MODELS, "GET", path) for path in MODEL_PATHS],
        SYSTEMS: [load_client.Request(SYSTEMS, "GET", path) for path in SYSTEM_PATHS],
        REC_REPEATED: [load_client.Request(REC_REPEATED, "POST", "/v1/recommendations", encode(b)) for b in rec_bodies],
        ESTIMATES: [load_client.Request(ESTIMATES, "POST", "/v1/estimates", encode(b)) for b in ESTIMATE_BODIES],
        TCO: [load_client.Request(TCO, "POST", "/v1/tco", encode(b)) for b in TCO_BODIES],
    }


def unique_recommendations(count: int, budget: float) -> list[load_client.Request]:
    """`count` recommendation requests never sent before: the four kinds in turn, each with a new figure."""
    bodies: list[dict[str, Any]] = []
    for index in range(count):
        step = index // 4 + 1
        workload: dict[str, Any] = [
            {"kind": "inference", "model": "llama-3.1-70b", "concurrency": 32 + step % 2000},
            {"kind": "training", "model": "llama-3.1-8b", "train_tokens": 1e11 + step * 1e6, "target_days": 30},
            {"kind": "fine_tuning", "model": "llama-3.1-70b", "method": "lora", "train_tokens": 2e8 + step * 1e3},
            {"kind": "image_generation", "model": "sdxl", "images_per_hour": 417 + step % 2000},
        ][index % 4]
        # The budget makes every body distinct even where the figure repeats; it never excludes anything.
        bodies.append({"workload": workload, "constraints": {"max_usd_per_hour": round(budget + step * 0.001, 3)}})
    encoded = [encode(body) for body in bodies]
    assert len(set(encoded)) == len(encoded)
    return [load_client.Request(REC_UNIQUE, "POST", "/v1/recommendations", body) for body in encoded]


def plan(
    count: int, pools: dict[str, list[load_client.Request]], mix: dict[str, int], rng: random.Random
) -> list[load_client.Request]:
    """`count` requests: each class's share of `mix` (largest remainders), shuffled, cycling over its pool.

    A pool is consumed in order, so the unique recommendations are each sent once (their pool must be large
    enough: see `class_counts`).
    """
    counts = class_counts(count, mix)
    labels = [label for label, n in counts.items() for _ in range(n)]
    rng.shuffle(labels)
    used = dict.fromkeys(counts, 0)
    requests = []
    for label in labels:
        pool = pools[label]
        requests.append(pool[used[label] % len(pool)])
        used[label] += 1
    return requests


def class_counts(count: int, mix: dict[str, int]) -> dict[str, int]:
    """How many of `count` requests each class gets, in proportion to its weight (largest remainders)."""
    total = sum(mix.values())
    exact = {label: count * weight / total for label, weight in mix.items() if weight}
    counts = {label: int(value) for label, value in exact.items()}
    for label in sorted(exact, key=lambda k: exact[k] - counts[k], reverse=True)[: count - sum(counts.values())]:
        counts[label] += 1
    return counts


def check_requests(client: httpx.Client, pools: dict[str, list[load_client.Request]]) -> list[str]:
    """Send each distinct request once; the ids of the recommendations. BenchError on anything but 200."""
    ids: list[str] = []
    for requests in pools.values():
        for request in requests:
            response = client.request(
                request.method,
                request.path,
                content=request.body,
                headers={"Content-Type": "application/json"} if request.body else None,
            )
            if response.status_code != 200:
                body = f" {request.body.decode()}" if request.body else ""
                raise servers.BenchError(
                    f"{request.method} {request.path}{body} answered {response.status_code}: {response.text[:500]}"
                )
            if request.label == REC_REPEATED:
                rec_id = response.json().get("id")
                if not isinstance(rec_id, str) or not rec_id.startswith("rec_"):
                    raise servers.BenchError(f"POST /v1/recommendations answered no id: {response.text[:300]}")
                ids.append(rec_id)
    return ids


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
    pools = repeated_requests()
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
        rec_ids = check_requests(server.client, pools)
        pools[REC_GET] = [load_client.Request(REC_GET, "GET", f"/v1/recommendations/{i}") for i in rec_ids]
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


def stats(name: str, durations_ns: list[int], seconds: float, errors: int) -> dict[str, Any]:
    if not durations_ns:
        return {"name": name, "requests": 0, "errors": errors}
    ordered = sorted(durations_ns)
    return {
        "name": name,
        "requests": len(ordered),
        "requests_per_s": round(len(ordered) / seconds, 1) if seconds > 0 else None,
        "median_ms": figures.ms(statistics.median(ordered)),
        "p95_ms": figures.ms(figures.percentile(ordered, 95)),
        "p99_ms": figures.ms(figures.percentile(ordered, 99)),
        "max_ms": figures.ms(ordered[-1]),
        "errors": errors,
    }


def report_document(
    meta: dict[str, Any],
    requests: list[load_client.Request],
    load: load_client.Load,
    events: list[dict[str, Any]],
    warmup: load_client.Load | None,
    ready: dict[str, Any],
    *,
    cache: dict[str, Any],
    server_cpu_s: float | None,
    log: dict[str, Any],
) -> dict[str, Any]:
    seconds = load.elapsed_ns / 1e9
    by_class: dict[str, tuple[list[int], list[int]]] = {label: ([], []) for label in MIX}
    for index, duration, status in zip(load.indexes, load.durations_ns, load.statuses, strict=True):
        durations, statuses = by_class[requests[index].label]
        durations.append(duration)
        statuses.append(status)
    classes = [
        {
            **stats(label, durations, seconds, sum(1 for s in statuses if not 200 <= s < 300)),
            "share_pct": round(100 * len(durations) / max(1, load.completed), 1),
        }
        for label, (durations, statuses) in by_class.items()
        if durations
    ]
    phases = []
    if events:
        # Redis is up until the kill begins, down until the restarted server answers PING, then back.
        at = {e["event"]: e["at_ns"] for e in events}
        bounds = [0, at["redis killed (begin)"], at["redis started"], load.elapsed_ns + 1]
        for name, start, end in zip(["redis up", "redis down", "redis back"], bounds, bounds[1:], strict=False):
            picked = [i for i, ended in enumerate(load.ended_ns) if start <= ended < end]
            phases.append(
                stats(
                    name,
                    [load.durations_ns[i] for i in picked],
                    (min(end, load.elapsed_ns) - start) / 1e9,
                    sum(1 for i in picked if not 200 <= load.statuses[i] < 300),
                )
                | {"from_s": round(start / 1e9, 3), "to_s": round(min(end, load.elapsed_ns) / 1e9, 3)}
            )
    return {
        "meta": meta,
        "overall": stats("all", load.durations_ns, seconds, load.errors) | {"seconds": round(seconds, 3)},
        "classes": classes,
        "phases": phases,
        "redis_events": [{k: v for k, v in e.items() if k != "at_ns"} for e in events],
        "failures": load.samples,
        "warmup": {"requests": warmup.completed, "errors": warmup.errors, "failures": warmup.samples}
        if warmup
        else None,
        "cpu": {
            "client_s": round(load.client_cpu_s, 2),
            "client_cores": round(load.client_cpu_s / seconds, 2) if seconds else None,
            "client_us_per_request": round(load.client_cpu_s / max(1, load.completed) * 1e6),
            "server_s": server_cpu_s,
            "server_cores": round(server_cpu_s / seconds, 2) if server_cpu_s is not None and seconds else None,
        },
        "cache": cache,
        "ready_after": ready,
        "server_log": log,
    }


def stats_rows(rows: Sequence[dict[str, Any]], first: str) -> list[str]:
    headers = [first, "requests", "req/s", "median ms", "p95 ms", "p99 ms", "max ms", "errors"]
    cells = []
    for r in rows:
        if not r["requests"]:
            cells.append([r["name"], "0", "", "", "", "", "", str(r["errors"])])
            continue
        cells.append(
            [
                r["name"],
                str(r["requests"]),
                f"{r['requests_per_s']:.0f}",
                f"{r['median_ms']:.2f}",
                f"{r['p95_ms']:.2f}",
                f"{r['p99_ms']:.2f}",
                f"{r['max_ms']:.2f}",
                str(r["errors"]),
            ]
        )
    return figures.render(headers, cells)


def text_report(document: dict[str, Any]) -> str:
    meta, overall, cpu = document["meta"], document["overall"], document["cpu"]
    out = [
        f"gpu-advisor load: {meta['workers']} workers, {meta['connections']} connections, {meta['requests']} "
        f"requests after {meta['warmup']} warm-up (client {meta['client']}; database {meta['database']} "
        f"{'fresh ' if meta['database_fresh'] else ''}at {meta['database_location']}, cache {meta['cache']}, "
        f"catalog {meta['catalog_version']})",
        f"throughput {overall['requests_per_s']:.0f} requests/s over {overall['seconds']:.1f} s; "
        f"errors {overall['errors']}",
        "",
        *stats_rows([overall, *document["classes"]], "class"),
    ]
    if document["phases"]:
        out += ["", "Redis killed and started again (phases by the time each request ended):"]
        out += stats_rows(document["phases"], "phase")
        out += [
            f"  {e['event']} at {e['at_s']:.2f} s, {e['completed']} requests completed"
            for e in document["redis_events"]
        ]
    server_cpu = (
        f"server {cpu['server_s']:.1f} s ({cpu['server_cores']:.2f} cores)" if cpu["server_s"] is not None else ""
    )
    out += [
        "",
        f"CPU: client {cpu['client_s']:.1f} s ({cpu['client_cores']:.2f} cores, {cpu['client_us_per_request']} us "
        f"per request), {server_cpu}",
    ]
    lookups = document["cache"]["lookups"]
    if lookups:
        out.append(
            "response cache lookups during the run: "
            + ", ".join(f"{k} {v:.0f}" for k, v in sorted(lookups.items()))
            + "".join(f"; {k} errors {v:.0f}" for k, v in document["cache"]["errors"].items() if v)
        )
    ready = document["ready_after"]
    out.append(
        f"/health/ready after the run: {'redis ok' if ready['redis_ok'] else 'redis NOT ok'} "
        f"({ready['answers_in_a_row']} answers in a row, {ready['asked']} asked in {ready['seconds']:.1f} s; "
        f"last {json.dumps(ready['last'])})"
    )
    if document["server_log"]["error_lines"]:
        out += [f"server log: {document['server_log']['error_lines']} lines name an error, the first:"]
        out += [f"  {line}" for line in document["server_log"]["first"]]
    warmup = document["warmup"]
    failures = [*(warmup["failures"] if warmup else []), *document["failures"]]
    if failures:
        out += ["failed requests (the first):"]
        for failure in failures:
            body = f" {failure['body']}" if failure["body"] else ""
            out.append(f"  {failure['request']}{body} -> {failure['status']}: {failure['answer']}")
    out.append(f"python {meta['python']} on {meta['platform']}")
    return "\n".join(out)


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
