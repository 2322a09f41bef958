"""Requests per second of one gpu-advisor server per kind of request, each as a ratio to a hello-world request.

Run from the repository root:

    uv run python bench/speed.py                          # 1 worker, fresh SQLite file, in-process cache
    uv run python bench/speed.py --duration 20 --connections 16 --json
    uv run python bench/speed.py --postgres                  # a fresh PostgreSQL database, migrated and seeded
    uv run python bench/speed.py --rounds 3                  # every scenario three times in turn: medians, ranges
    uv run python bench/speed.py --workers 2 \\
        --database-url postgresql+asyncpg://gpu_advisor:gpu_advisor@127.0.0.1:5432/gpu_advisor \\
        --redis-url redis://127.0.0.1:6379/0
    uv run --with aiohttp python bench/speed.py --load-generator aiohttp

The load generator is wrk (Debian: `apt-get install -y wrk`) when it is on PATH: a C program, so that it is not
the bottleneck even for the cheapest request. Without it (or with `--load-generator aiohttp|httpx`) the requests
come from an asyncio client of this process (bench/load_client.py `drive`): aiohttp when importable
(`uv run --with aiohttp`), else httpx.AsyncClient, both far more costly per request than wrk, so the hello-world
figure, and every ratio, is then a floor. The report names the generator used and its CPU use.

What it does:

1. domain: ranks the whole catalog in-process for the six workloads of bench/recommend_latency.py, reusing its
   timing (`bench_domain`, `--domain-requests` calls each), and prints the median over all six against the
   1 ms target of bench/recommend_latency.py;
2. starts `gpu-advisor serve --workers N` (default 1) on a free port of 127.0.0.1 (without `--database-url` on a
   fresh SQLite file, with `--postgres` on a fresh PostgreSQL database of that name, dropped and created through
   `--postgres-admin-url`, without `--redis-url` with its in-process cache) with GPU_ADVISOR_RATE_LIMIT_PER_MINUTE=0
   and GPU_ADVISOR_LOG_LEVEL=WARNING, waits for `GET /health/ready` and checks that each request below answers
   200;
3. for each scenario, `--warmup` seconds of load (not measured), then `--duration` seconds measured, always at
   `--connections` connections (default 16) kept busy:
   - hello-world: `GET /health/live`, a constant answer through the same app and middleware;
   - `GET /v1/gpus/h100-sxm`;
   - `POST /v1/recommendations` cached: the same body (Llama 3.1 70B inference, concurrency 32) every time;
   - `POST /v1/recommendations` uncached: every body unique, the 70B inference with concurrency 33..288 and
     SDXL with 418..673 images per hour in turn, each with an unreachable `max_usd_per_hour` budget drawn per run
     plus a step per body (it changes the id, not the answer); wrk's Lua script reads them from a file, one a
     line, each wrk thread taking every n-th; the warm-up has bodies of its own; more requests than bodies
     fails the run (raise `--uncached-bodies`);
   with `--rounds N` the four scenarios are measured N times in turn (each round with uncached bodies of its own),
   so that a slow minute of a shared machine falls on every scenario alike rather than on one;
4. reports (for several rounds: the round with the median requests per second, the ratio of each round to that
   round's hello-world and the p99 as medians over the rounds, and each one's range) requests per second,
   median, p99 and max latency, the ratio of each scenario's requests per second to hello-world's, with the
   targets cached >= 0.70 and uncached >= 0.05 x hello-world and an uncached p99 of at most 50 ms (at the default
   16 connections), the response-cache lookups the server counted in each scenario (hits for the cached one,
   misses for the uncached one) and the CPU seconds used by the load generator and the server's processes during
   each scenario.

`--json` prints a JSON document on stdout (the report then goes to stderr). It exits 1 when any request answers
anything but 2xx or fails in transport (and, with `--check-targets`, when a target is missed), and 2 when the
benchmark cannot run (no server, no wrk when asked for, unexpected answers to the check requests).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import shutil
import statistics
import sys
from collections.abc import Sequence
from dataclasses import asdict
from math import inf
from pathlib import Path
from typing import Any

import msgspec

from bench import figures, load_client, servers, stores, wrk
from bench.recommend_latency import DOMAIN_TARGET_MEDIAN_MS, UNREACHABLE_BUDGET_USD, bench_domain
from bench.speed_report import text_report
from bench.speed_scenarios import (
    REQUEST_TIMEOUT_S,
    measure_all,
    median_round,
    scenario_label,
    scenarios,
)

TARGETS = {"cached": 0.70, "uncached": 0.05}  # requests/s as a share of hello-world's
P99_TARGETS_MS = {"uncached": 50.0}  # at 16 connections: one event loop queues up to 16 requests
SERVER_ENV = {"GPU_ADVISOR_RATE_LIMIT_PER_MINUTE": "0", "GPU_ADVISOR_LOG_LEVEL": "WARNING"}


# --- the requests -----------------------------------------------------------------------------------------------


# --- wrk --------------------------------------------------------------------------------------------------------


# --- one scenario -----------------------------------------------------------------------------------------------


# --- the run ----------------------------------------------------------------------------------------------------


def run(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    args.workdir = workdir
    budget = UNREACHABLE_BUDGET_USD + random.randrange(1, 1_000_000) / 1000
    rounds = [scenarios(workdir, args, budget, index) for index in range(args.rounds)]
    items = rounds[0]
    with contextlib.ExitStack() as stack:
        database_url = args.database_url
        if args.postgres:
            database_url = stack.enter_context(
                stores.fresh_postgres_database(args.postgres_admin_url, args.database_name)
            )
        server = stack.enter_context(
            servers.running(
                workdir,
                database_url=database_url,
                redis_url=args.redis_url,
                port=args.port,
                timeout_s=REQUEST_TIMEOUT_S,
                workers=args.workers,
                extra_env=SERVER_ENV,
                migrate=True if args.postgres else None,
            )
        )
        measured = measure_all(server, rounds, args)
        facts = server.facts("catalog_version")
    by_scenario = [[outcomes[i] for outcomes in measured] for i in range(len(items))]
    # A ratio compares a scenario with the hello-world of its own round; the report gives the median over rounds.
    round_ratios = {
        s.name: [
            o.requests_per_s / r[0].requests_per_s if r[0].requests_per_s else 0.0
            for o, r in zip(runs, measured, strict=True)
        ]
        for s, runs in zip(items, by_scenario, strict=True)
    }
    ratios = {name: round(statistics.median(values), 3) for name, values in round_ratios.items()}
    p99s = {
        s.name: round(statistics.median([o.p99_ms for o in runs if o.p99_ms is not None] or [inf]), 3)
        for s, runs in zip(items, by_scenario, strict=True)
    }
    return {
        "meta": {
            **facts,
            "load_generator": args.generator,
            "wrk_threads": args.threads if args.generator == "wrk" else None,
            "connections": args.connections,
            "duration_s": args.duration,
            "warmup_s": args.warmup,
            "rounds": args.rounds,
            "uncached_budget_usd_per_hour": budget,
            **figures.platform_facts(),
        },
        "results": [
            asdict(median_round(runs))
            | {
                "label": scenario_label(s),
                "requests_per_s_range": [min(o.requests_per_s for o in runs), max(o.requests_per_s for o in runs)],
                "ratio_range": [round(min(round_ratios[s.name]), 3), round(max(round_ratios[s.name]), 3)],
                "p99_ms_median": p99s[s.name],
                "p99_ms_range": [min(o.p99_ms or inf for o in runs), max(o.p99_ms or 0.0 for o in runs)],
                "non_2xx": sum(o.non_2xx for o in runs),
                "transport_errors": sum(o.transport_errors for o in runs),
            }
            for s, runs in zip(items, by_scenario, strict=True)
        ],
        "rounds": [[asdict(o) for o in outcomes] for outcomes in measured],
        "ratios_to_hello_world": ratios,
        "targets": {
            name: {"min_ratio": minimum, "ratio": ratios.get(name), "met": (ratios.get(name) or 0) >= minimum}
            for name, minimum in TARGETS.items()
        },
        "p99_targets": {
            name: {"max_p99_ms": maximum, "p99_ms": p99s.get(name), "met": (p99s.get(name) or inf) <= maximum}
            for name, maximum in P99_TARGETS_MS.items()
        },
    }


# --- the report -------------------------------------------------------------------------------------------------


def domain_part(calls: int) -> dict[str, Any]:
    results, meta = bench_domain(calls)
    median = meta["median_ms_all"]
    return {
        "calls_per_workload": calls,
        "median_ms_all": median,
        "slowest_workload_median_ms": max(r.median_ms for r in results),
        "target_median_ms": DOMAIN_TARGET_MEDIAN_MS,
        "target_met": median < DOMAIN_TARGET_MEDIAN_MS,
        "workloads": [asdict(r) for r in results],
    }


def choose_generator(parser: argparse.ArgumentParser, asked: str) -> tuple[str, str | None]:
    wrk_path = shutil.which("wrk")
    if asked == "wrk" and wrk_path is None:
        parser.error(f"wrk is not installed: {wrk.INSTALL_HINT}")
    if asked == "aiohttp" and not load_client.client_available("aiohttp"):
        parser.error(f"aiohttp is not installed: {load_client.AIOHTTP_HINT}")
    if asked != "auto":
        return asked, wrk_path
    if wrk_path is not None:
        return "wrk", wrk_path
    print(f"speed: wrk is not installed ({wrk.INSTALL_HINT}); using an asyncio client", file=sys.stderr)
    return ("aiohttp" if load_client.client_available("aiohttp") else "httpx"), None


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--duration", type=float, default=10.0, help="measured seconds per scenario (default 10)")
    parser.add_argument("--warmup", type=float, default=3.0, help="warm-up seconds per scenario (default 3)")
    parser.add_argument("--connections", type=int, default=16, help="connections kept busy (default 16)")
    parser.add_argument("--threads", type=int, default=1, help="wrk threads (default 1: one core for wrk)")
    parser.add_argument("--workers", type=int, default=1, help="server worker processes (default 1)")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="measure every scenario this many times, in turn; report the median round (default 1)",
    )
    parser.add_argument(
        "--load-generator",
        choices=["auto", "wrk", *load_client.CLIENTS],
        default="auto",
        help="wrk, or an asyncio client of this process (default auto: wrk when on PATH)",
    )
    parser.add_argument(
        "--uncached-bodies",
        type=int,
        default=40_000,
        help="unique bodies for the uncached scenario (default 40000; a quarter more are made for its warm-up)",
    )
    parser.add_argument(
        "--domain-requests", type=int, default=200, help="in-process domain calls per workload (default 200; 0: skip)"
    )
    parser.add_argument("--skip-http", action="store_true", help="only the in-process domain part")
    parser.add_argument(
        "--check-targets", action="store_true", help="also exit 1 when a ratio or the domain median misses its target"
    )
    servers.add_server_options(parser)
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="serve from a fresh PostgreSQL database (dropped and created, migrated and seeded, dropped afterwards)",
    )
    stores.add_fresh_database_options(parser, name="gpu_advisor_speed", when="with --postgres")
    parser.add_argument("--json", action="store_true", help="print JSON on stdout (the report goes to stderr)")
    args = parser.parse_args(argv)
    if not 1 <= args.duration <= 3600:
        parser.error("--duration must be between 1 and 3600 seconds")
    if not (args.warmup == 0 or 1 <= args.warmup <= 600):
        parser.error("--warmup must be 0 or between 1 and 600 seconds")
    if not 1 <= args.connections <= 1024:
        parser.error("--connections must be between 1 and 1024")
    if not 1 <= args.threads <= min(64, args.connections):
        parser.error("--threads must be between 1 and 64, and at most --connections")
    if not 1 <= args.rounds <= 20:
        parser.error("--rounds must be between 1 and 20")
    if not 1 <= args.workers <= 64:
        parser.error("--workers must be between 1 and 64")
    if not 1000 <= args.uncached_bodies <= 2_000_000:
        parser.error("--uncached-bodies must be between 1000 and 2000000")
    if not 0 <= args.domain_requests <= 100_000:
        parser.error("--domain-requests must be between 0 and 100000")
    servers.check_server_options(parser, args)
    if args.postgres and args.database_url:
        parser.error("--postgres and --database-url exclude each other")
    args.generator, args.wrk = choose_generator(parser, args.load_generator) if not args.skip_http else ("", None)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    servers.exit_on_sigterm()
    out = sys.stderr if args.json else sys.stdout
    document: dict[str, Any] = {"domain": None, "http": None}
    if args.domain_requests:
        try:
            document["domain"] = domain_part(args.domain_requests)
        except (ValueError, msgspec.ValidationError) as error:
            print(f"speed: the domain part failed: {error}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("speed: interrupted", file=sys.stderr)
            return 130
        print(text_report({"domain": document["domain"]}), file=out, flush=True)
    if not args.skip_http:
        outcome = servers.run_in_workdir("speed", lambda workdir: run(args, workdir))
        if isinstance(outcome, int):
            return outcome
        document["http"] = outcome
        print(text_report({"http": outcome}), file=out)
    if args.json:
        print(json.dumps(document, indent=2))
    code = 0
    failed = [r for r in (document["http"] or {}).get("results", []) if r["non_2xx"] or r["transport_errors"]]
    if failed:
        names = ", ".join(f"{r['label']} ({r['non_2xx']} non-2xx, {r['transport_errors']} transport)" for r in failed)
        print(f"speed: failed requests: {names}", file=sys.stderr)
        code = 1
    if args.check_targets:
        http = document["http"] or {}
        missed = [name for name, t in http.get("targets", {}).items() if not t["met"]]
        missed += [f"{name} p99" for name, t in http.get("p99_targets", {}).items() if not t["met"]]
        if document["domain"] and not document["domain"]["target_met"]:
            missed.append("domain median")
        if missed:
            print(f"speed: targets missed: {', '.join(missed)}", file=sys.stderr)
            code = 1
    return code


if __name__ == "__main__":
    sys.exit(main())
