"""Latency of recommendations: the domain ranking in-process, and POST/GET /v1/recommendations on a live server.

Run from the repository root:

    uv run python bench/recommend_latency.py                 # fresh SQLite file, in-process cache
    uv run python bench/recommend_latency.py --domain-requests 1000 --http-requests 2000 --json
    uv run python bench/recommend_latency.py \\
        --database-url postgresql+asyncpg://gpu_advisor:gpu_advisor@127.0.0.1:5432/gpu_advisor \\
        --redis-url redis://127.0.0.1:6379/0

What it does:

1. domain: ranks the whole reference catalog (`api.adapters.storage.reference.load_reference_catalog`) for six
   representative workloads with `domain.planning.recommend`, in this process, no HTTP: 20 warm-up calls, then
   `--domain-requests` timed calls per workload (`time.perf_counter_ns`); prints median, p95, p99 and max in
   milliseconds, the number of options and exclusions of one result, and the median over all six workloads
   (the target is a median under 1 ms per request); with `--cold` the catalog's shared facts (layouts, speed
   models, rentals: what requests of one shape share) are emptied before every call, and with `--repricing` every
   call runs on a snapshot with one more offer at a new price (built untimed), as an instance serves after each
   offer write: the facts that read no offers, or other GPUs' offers, are kept across it;
2. HTTP: starts `gpu-advisor serve --workers 1 --migrate` on a free port of 127.0.0.1 as a subprocess
   (without `--database-url` on a fresh SQLite file in a temporary directory, without `--redis-url` with its
   in-process cache), waits for `GET /health/ready` (bounded number of tries), then sends sequential requests
   over one keep-alive connection:
   - `POST /v1/recommendations` (cached): the same six bodies, cycled, after one warm-up request each;
   - `POST /v1/recommendations` (uncached): bodies never sent before, alternating the 70B inference with
     `concurrency` = 32 + i and SDXL with `images_per_hour` = 417 + i; with `--database-url` or `--redis-url`
     (stores that outlive a run) each body also gets an unreachable, per-run random `max_usd_per_hour`
     budget so no id was stored by an earlier run (the budget filter never excludes anything);
   - `GET /v1/recommendations/{id}` cycling over the ids the POSTs returned (served from the response cache);
   and prints median, p95, p99, max (milliseconds), requests per second and non-200 answers;
3. stops the server (terminate, then kill after a timeout), also on errors and Ctrl-C.

`--json` prints a JSON document on stdout (the tables then go to stderr). It exits 1 when any measured
request does not answer 200, and 2 when the server does not come up or answers something unexpected.
HTTP figures include the client's own time (httpx, one connection, no pipelining); the server's log level
defaults to WARNING (override with GPU_ADVISOR_LOG_LEVEL) so per-request access logging does not dominate.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import msgspec

from api.adapters.storage.reference import load_reference_catalog
from api.settings import Settings
from bench import figures, servers
from domain.catalog import Catalog
from domain.planning import RecommendationRequest, recommend
from domain.planning.facts import SHARED

WORKLOADS: list[tuple[str, dict[str, Any]]] = [
    (
        "inference llama-3.1-70b, concurrency 32",
        {"workload": {"kind": "inference", "model": "llama-3.1-70b", "concurrency": 32}},
    ),
    (
        "inference deepseek-r1, concurrency 50",
        {"workload": {"kind": "inference", "model": "deepseek-r1", "concurrency": 50}},
    ),
    (
        "training llama-3.1-405b, 1e11 tokens, max 512 GPUs",
        {
            "workload": {"kind": "training", "model": "llama-3.1-405b", "train_tokens": 1e11},
            "constraints": {"max_gpus": 512},
        },
    ),
    (
        "training llama-3.1-8b, 1e11 tokens, 30 days",
        {"workload": {"kind": "training", "model": "llama-3.1-8b", "train_tokens": 1e11, "target_days": 30}},
    ),
    (
        "fine_tuning llama-3.1-70b, lora, 2e8 tokens",
        {"workload": {"kind": "fine_tuning", "model": "llama-3.1-70b", "method": "lora", "train_tokens": 2e8}},
    ),
    (
        "image_generation sdxl, 417 images/h",
        {"workload": {"kind": "image_generation", "model": "sdxl", "images_per_hour": 417}},
    ),
]

DOMAIN_WARMUP = 20
DOMAIN_TARGET_MEDIAN_MS = 1.0
MAX_UNCACHED_REQUESTS = 1000  # the ids stay within the server's in-process cache (2048 entries by default)
UNREACHABLE_BUDGET_USD = 1_000_000.0  # max_usd_per_hour far above any offer: changes the id, not the answer

REQUEST_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class DomainResult:
    workload: str
    calls: int
    median_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float
    options: int
    excluded: int


# --- part 1: the domain, in-process -----------------------------------------------------------------------------


def repriced(catalog: Catalog, call: int) -> Catalog:
    """The catalog with one more offer at a new price, as an instance serves it after an offer write."""
    offer = catalog.offers[(call * 37) % len(catalog.offers)]
    price = round(offer.usd_per_gpu_hour * 1.01 + 0.0001, 4)
    return catalog.with_offers([msgspec.structs.replace(offer, usd_per_gpu_hour=price)])


def bench_domain(calls: int, cold: bool = False, repricing: bool = False) -> tuple[list[DomainResult], dict[str, Any]]:
    """Per-workload results and the run's facts (catalog, median over all six workloads, target); `cold` empties
    the catalog's shared facts before every call, as if no request of the same shape had come before; `repricing`
    times every call on a snapshot with one more offer re-priced (built untimed), as after each offer write."""
    catalog = load_reference_catalog()
    rate = Settings().exchange_rate()
    now = datetime.now(UTC)
    results: list[DomainResult] = []
    everything: list[int] = []
    for name, body in WORKLOADS:
        request = msgspec.convert(body, RecommendationRequest)
        result = recommend(catalog, request, now=now, lang="en", rate=rate)
        for _ in range(DOMAIN_WARMUP):
            recommend(catalog, request, now=now, lang="en", rate=rate)
        durations: list[int] = []
        for call in range(calls):
            if cold:
                SHARED.clear()
            if repricing:
                catalog = repriced(catalog, call)
            before = time.perf_counter_ns()
            recommend(catalog, request, now=now, lang="en", rate=rate)
            durations.append(time.perf_counter_ns() - before)
        durations.sort()
        everything.extend(durations)
        results.append(
            DomainResult(
                workload=name,
                calls=calls,
                median_ms=figures.ms(statistics.median(durations)),
                p95_ms=figures.ms(figures.percentile(durations, 95)),
                p99_ms=figures.ms(figures.percentile(durations, 99)),
                max_ms=figures.ms(durations[-1]),
                options=len(result.options),
                excluded=len(result.excluded),
            )
        )
    overall_median_ms = figures.ms(statistics.median(everything))
    meta = {
        "catalog_version": catalog.version,
        "gpus": len(catalog.gpus),
        "warmup_per_workload": DOMAIN_WARMUP,
        "cold": cold,
        "repricing": repricing,
        "median_ms_all": overall_median_ms,
        "target_median_ms": DOMAIN_TARGET_MEDIAN_MS,
        "target_met": overall_median_ms < DOMAIN_TARGET_MEDIAN_MS,
    }
    return results, meta


# --- part 2: the requests ---------------------------------------------------------------------------------------


def uncached_bodies(count: int, budget: float | None) -> list[dict[str, Any]]:
    """`count` bodies never sent before: the 70B inference and SDXL alternately, each with a new figure."""
    inference, sdxl = WORKLOADS[0][1], WORKLOADS[5][1]
    bodies: list[dict[str, Any]] = []
    for index in range(count):
        step = index // 2
        if index % 2 == 0:
            workload = {**inference["workload"], "concurrency": 32 + step + 1}
        else:
            workload = {**sdxl["workload"], "images_per_hour": 417 + step + 1}
        body: dict[str, Any] = {"workload": workload}
        if budget is not None:
            body["constraints"] = {"max_usd_per_hour": budget}
        bodies.append(body)
    assert len({json.dumps(body, sort_keys=True) for body in bodies}) == len(bodies)
    return bodies


def check_recommendation(response: httpx.Response, what: str) -> str:
    """The id of a well-formed answer; BenchError otherwise."""
    if response.status_code != 200:
        raise servers.BenchError(f"{what} answered {response.status_code}: {response.text[:300]}")
    document = response.json()
    rec_id = document.get("id")
    if not isinstance(rec_id, str) or not rec_id.startswith("rec_") or not isinstance(document.get("options"), list):
        raise servers.BenchError(f"{what} answered without `id` (rec_...) or `options`: {response.text[:300]}")
    return rec_id


def measure(endpoint: str, count: int, send: Callable[[int], httpx.Response]) -> tuple[figures.HttpResult, list[str]]:
    """Time `send(0)` .. `send(count - 1)`; the result and the ids of the 200 answers (when they have one)."""
    durations: list[int] = []
    ids: list[str] = []
    non_200 = 0
    started = time.perf_counter_ns()
    for index in range(count):
        before = time.perf_counter_ns()
        response = send(index)
        durations.append(time.perf_counter_ns() - before)
        if response.status_code != 200:
            non_200 += 1
        elif endpoint.startswith("POST"):
            ids.append(str(response.json().get("id")))
    elapsed_ns = time.perf_counter_ns() - started
    return figures.summarize(endpoint, durations, elapsed_ns, non_200), ids


def bench_http(args: argparse.Namespace, workdir: Path) -> tuple[list[figures.HttpResult], dict[str, Any]]:
    persistent = bool(args.database_url or args.redis_url)
    budget = UNREACHABLE_BUDGET_USD + random.randrange(1, 1_000_000) / 1000 if persistent else None
    cached = [body for _, body in WORKLOADS]
    fresh = uncached_bodies(args.uncached_requests, budget)
    with servers.running(
        workdir, database_url=args.database_url, redis_url=args.redis_url, port=args.port, timeout_s=REQUEST_TIMEOUT_S
    ) as server:
        client = server.client

        ids: list[str] = []
        for (name, _), body in zip(WORKLOADS, cached, strict=True):  # one warm-up each, checked
            ids.append(check_recommendation(client.post("/v1/recommendations", json=body), f"POST ({name})"))
        fetched = client.get(f"/v1/recommendations/{ids[0]}")
        if check_recommendation(fetched, f"GET /v1/recommendations/{ids[0]}") != ids[0]:
            raise servers.BenchError(f"GET /v1/recommendations/{ids[0]} answered another id: {fetched.text[:300]}")

        results: list[figures.HttpResult] = []
        result, _ = measure(
            "POST /v1/recommendations (cached)",
            args.http_requests,
            lambda i: client.post("/v1/recommendations", json=cached[i % len(cached)]),
        )
        results.append(result)
        if fresh:
            result, fresh_ids = measure(
                "POST /v1/recommendations (uncached)",
                len(fresh),
                lambda i: client.post("/v1/recommendations", json=fresh[i]),
            )
            results.append(result)
            ids.extend(fresh_ids)
        if args.get_requests:
            result, _ = measure(
                "GET /v1/recommendations/{id}",
                args.get_requests,
                lambda i: client.get(f"/v1/recommendations/{ids[i % len(ids)]}"),
            )
            results.append(result)
    meta = {
        **server.facts("server_catalog_version"),
        "uncached_budget_usd_per_hour": budget,
        "distinct_ids": len(set(ids)),
    }
    return results, meta


# --- the report -------------------------------------------------------------------------------------------------


def domain_table(results: Sequence[DomainResult], meta: dict[str, Any]) -> str:
    overall_median_ms = meta["median_ms_all"]
    headers = ["workload", "calls", "median ms", "p95 ms", "p99 ms", "max ms", "options", "excluded"]
    rows = [
        [
            r.workload,
            str(r.calls),
            f"{r.median_ms:.3f}",
            f"{r.p95_ms:.3f}",
            f"{r.p99_ms:.3f}",
            f"{r.max_ms:.3f}",
            str(r.options),
            str(r.excluded),
        ]
        for r in results
    ]
    rows.append(["all six", str(sum(r.calls for r in results)), f"{overall_median_ms:.3f}", "", "", "", "", ""])
    verdict = "met" if overall_median_ms < DOMAIN_TARGET_MEDIAN_MS else "NOT met"
    return "\n".join(
        [
            f"domain.planning.recommend, in-process, whole catalog ({meta['gpus']} GPUs, catalog "
            f"{meta['catalog_version']}), {DOMAIN_WARMUP} warm-up calls per workload"
            + (", one more offer re-priced before every call" if meta["repricing"] else ""),
            *figures.render(headers, rows),
            f"target: median < {DOMAIN_TARGET_MEDIAN_MS:g} ms per request ({verdict}: "
            f"all six {overall_median_ms:.3f} ms, slowest workload {max(r.median_ms for r in results):.3f} ms)",
        ]
    )


def http_table(results: Sequence[figures.HttpResult], meta: dict[str, Any]) -> str:
    return "\n".join(
        [
            f"/v1/recommendations: 1 worker, warm, sequential keep-alive requests "
            f"(database: {meta['database']}, cache: {meta['cache']}, catalog {meta['server_catalog_version']})",
            *figures.http_table_lines(results),
        ]
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--domain-requests", type=int, default=300, help="timed domain calls per workload (default 300)"
    )
    parser.add_argument("--http-requests", type=int, default=500, help="timed cached POST requests (default 500)")
    parser.add_argument(
        "--uncached-requests",
        type=int,
        default=200,
        help=f"timed POST requests with never-sent bodies (default 200, at most {MAX_UNCACHED_REQUESTS})",
    )
    parser.add_argument(
        "--get-requests", type=int, default=200, help="timed GET /v1/recommendations/{id} (default 200)"
    )
    parser.add_argument("--skip-http", action="store_true", help="only the in-process domain part")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--cold", action="store_true", help="domain calls without the facts earlier requests of the same shape shared"
    )
    mode.add_argument(
        "--repricing", action="store_true", help="every domain call on a snapshot with one more offer re-priced"
    )
    servers.add_server_options(parser)
    parser.add_argument("--json", action="store_true", help="print JSON on stdout (the tables go to stderr)")
    args = parser.parse_args(argv)
    if not 1 <= args.domain_requests <= 100_000:
        parser.error("--domain-requests must be between 1 and 100000")
    if not 1 <= args.http_requests <= 1_000_000:
        parser.error("--http-requests must be between 1 and 1000000")
    if not 0 <= args.uncached_requests <= MAX_UNCACHED_REQUESTS:
        parser.error(f"--uncached-requests must be between 0 and {MAX_UNCACHED_REQUESTS}")
    if not 0 <= args.get_requests <= 1_000_000:
        parser.error("--get-requests must be between 0 and 1000000")
    servers.check_server_options(parser, args)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    servers.exit_on_sigterm()
    out = sys.stderr if args.json else sys.stdout

    try:
        domain_results, domain_meta = bench_domain(args.domain_requests, cold=args.cold, repricing=args.repricing)
    except (ValueError, msgspec.ValidationError) as error:  # a workload the catalog no longer knows
        print(f"recommend_latency: the domain part failed: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("recommend_latency: interrupted", file=sys.stderr)
        return 130
    print(domain_table(domain_results, domain_meta), file=out, flush=True)

    http_results: list[figures.HttpResult] = []
    http_meta: dict[str, Any] = {}
    if not args.skip_http:
        outcome = servers.run_in_workdir("recommend_latency", lambda workdir: bench_http(args, workdir))
        if isinstance(outcome, int):
            return outcome
        http_results, http_meta = outcome
        print(file=out)
        print(http_table(http_results, http_meta), file=out)
    facts = figures.platform_facts()
    print(f"python {facts['python']} on {facts['platform']}", file=out)

    if args.json:
        document = {
            "meta": facts,
            "domain": {"meta": domain_meta, "results": [asdict(r) for r in domain_results]},
            "http": {"meta": http_meta, "results": [asdict(r) for r in http_results]} if not args.skip_http else None,
        }
        print(json.dumps(document, indent=2))
    return figures.non_200_exit("recommend_latency", http_results)


if __name__ == "__main__":
    sys.exit(main())
