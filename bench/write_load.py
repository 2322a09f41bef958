"""Offer writes under load: three instances on PostgreSQL behind HAProxy, the same read load with and without writes.

Run from the repository root (aiohttp is the faster client; without it, pass --client httpx):

    uv run --with aiohttp python bench/write_load.py
    uv run python bench/write_load.py --client httpx --requests 1500 --connections 24

What it does:

1. drops and creates the database `--database-name` (default gpu_advisor_write_bench) through
   `--postgres-admin-url`, starts a redis-server of its own (loopback, no persistence), then three `gpu-advisor
   serve` instances (one worker each; the first migrates and seeds) and HAProxy (Debian's) balancing over them
   round-robin, health-checked on /health/ready;
2. after `--warmup` untimed requests with writes (default 1000), drives `--requests` requests (default 3000) over
   `--connections` keep-alive connections through HAProxy, in `--rounds` rounds (default 3) of two runs back to back:
   first reads only, then the same reads with `--write-share` percent (default 6) of them replaced by `PUT
   /v1/admin/offers/{id}`, each a new price of one of the seeded offers (so every write changes the catalog and its
   version; under this stream each instance serves one new snapshot per GPU_ADVISOR_CATALOG_RELOAD_INTERVAL_S, read
   once for all of them: README, "Writes under load"). The reads (`--mix`) are the load benchmark's mix
   (bench/load.py: catalog reads, recommendations repeated and new, stored recommendations, estimates, TCO;
   `service`, the default) or catalog reads alone (lists, single GPUs, comparisons, offers, models, systems:
   `catalog`, every answer a cached body, so a write's own cost weighs most). A new price changes what every
   recommendation that priced that GPU answers: with writes, the repeated recommendations are computed again;
3. prints, per run, the total throughput (requests per second over the run), the read and write p50/p99/max
   latency in milliseconds, the errors (any answer but 2xx) and how the recommendations missed in the cache were
   answered (computed by the instance that claimed them, taken from it), then the ratio of the two throughputs of
   each round and their median (the machine's speed drifts: runs moments apart are what compare); with
   `--json` the figures go to stdout as JSON;
4. imports `--import-rows` offers (default 10,000, 0 to skip) as one CSV body straight to the first instance while
   a second client asks that instance's /health/live one request after another, and prints how long the import
   took and the longest /health/live answer meanwhile: how long the importing instance stalled. Each run also
   reports the CPU the three instances used per request: on a machine whose cores the reads already fill, a write
   costs the throughput its CPU costs.

It stops everything it started (and drops the database) at the end, also on errors and Ctrl-C. Exit 1 when a
request failed, 2 when the benchmark cannot run. Sized for a 2-core machine: everything is on loopback and every
run is bounded by its request count.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import io
import json
import random
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx

from api.services.offer_import import CSV_COLUMNS
from bench import load_client, load_requests, servers, stores
from bench.servers import BenchError

# The balancer the three-instance tests use; `tests` is the repository's, not a package's of that name.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.integration.haproxy import Balancer

API_KEY = "write-bench-key"
INSTANCES = 3
READY_TRIES = 600
REQUEST_TIMEOUT_S = 60.0
READ_PATHS = (
    "/v1/gpus?vendor=nvidia",
    "/v1/gpus?sort=memory_gb&order=desc&limit=10",
    "/v1/gpus/h100-sxm",
    "/v1/gpus/mi300x",
    "/v1/gpus/compare?ids=h100-sxm,h200,mi300x",
    "/v1/offers?gpu=h100-sxm",
    "/v1/offers?sort=price&limit=20",
    "/v1/models",
    "/v1/systems",
)
READ, WRITE = "read", "write"
COMPUTATIONS = re.compile(r'gpu_advisor_recommendation_computations_total\{how="(?P<how>\w+)"\} (?P<value>\S+)')


@contextmanager
def instances(workdir: Path, database_url: str, redis_url: str) -> Iterator[list[tuple[str, int]]]:
    """The URL and process id of three ready instances on the database and Redis; the first migrates and seeds it."""
    processes: list[subprocess.Popen[bytes]] = []
    urls: list[tuple[str, int]] = []
    try:
        for group in ([0], list(range(1, INSTANCES))):
            waiting = []
            for number in group:
                folder = workdir / f"instance-{number + 1}"
                folder.mkdir()
                port = servers.free_port()
                env = servers.server_env(
                    database_url,
                    redis_url,
                    {"GPU_ADVISOR_API_KEYS": API_KEY, "GPU_ADVISOR_PENDING_SPOOL_DIR": str(folder / "spool")},
                )
                log = folder / "server.log"
                process = servers.start_server(port, env, log, migrate=number == 0)
                processes.append(process)
                waiting.append((f"http://{servers.HOST}:{port}", process, log))
            for url, process, log in waiting:
                with httpx.Client(base_url=url, timeout=REQUEST_TIMEOUT_S) as client:
                    # Three instances importing at once on two busy cores take a while.
                    servers.wait_until_ready(client, process, log, tries=READY_TRIES)
                urls.append((url, process.pid))
        yield urls
        for process in processes:
            if process.poll() is not None:
                raise BenchError(f"an instance exited during the run (code {process.returncode})")
    finally:
        for process in processes:
            servers.stop_server(process)


def offers(url: str) -> list[dict[str, Any]]:
    """The seeded offers as GET /v1/offers returns them (what a PUT accepts)."""
    with httpx.Client(base_url=url, timeout=REQUEST_TIMEOUT_S) as client:
        answer = client.get("/v1/offers", params={"limit": 200})
        if answer.status_code != 200:
            raise BenchError(f"GET /v1/offers answered {answer.status_code}: {answer.text[:200]}")
        items: list[dict[str, Any]] = answer.json()["items"]
    return items


def catalog_reads(count: int, rng: random.Random) -> list[Any]:
    """`count` catalog reads (the cheapest answers: every one a cached body)."""
    return [load_client.Request(READ, "GET", rng.choice(READ_PATHS)) for _ in range(count)]


def service_reads(url: str, budgets: Iterator[float]) -> Callable[[int, random.Random], list[Any]]:
    """The load benchmark's mix (bench/load.py), its unique recommendations new in every run."""
    with httpx.Client(base_url=url, timeout=REQUEST_TIMEOUT_S) as client:
        pools = load_requests.checked_pools(client)

    def reads(count: int, rng: random.Random) -> list[Any]:
        unique = load_requests.class_counts(count, load_requests.MIX)[load_requests.REC_UNIQUE]
        pools[load_requests.REC_UNIQUE] = load_requests.unique_recommendations(unique, next(budgets))
        return load_requests.plan(count, pools, load_requests.MIX, rng)

    return reads


def plan(
    count: int,
    write_share: float,
    seeded: Sequence[dict[str, Any]],
    rng: random.Random,
    reads: Callable[[int, random.Random], list[Any]],
) -> list[Any]:
    """`count` requests: reads in a shuffled order, `write_share` percent of them PUTs of a new price."""
    writes = round(count * write_share / 100)
    requests = reads(count - writes, rng)
    for number in range(writes):
        offer = rng.choice(seeded)
        # A price no earlier write set, so each write is a change (history row, new version, reloads).
        price = round(offer["usd_per_gpu_hour"] * (1 + rng.random()) + number / 10_000, 4)
        body = json.dumps(offer | {"usd_per_gpu_hour": price}).encode()
        headers = (("Content-Type", "application/json"), ("X-API-Key", API_KEY))
        requests.append(load_client.Request(WRITE, "PUT", f"/v1/admin/offers/{offer['id']}", body, headers))
    rng.shuffle(requests)
    return requests


def percentile(values: list[float], share: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def figures(name: str, requests: Sequence[Any], load: load_client.Load) -> dict[str, Any]:
    """Throughput, per-class latency and errors of one run."""
    seconds = load.elapsed_ns / 1e9
    result: dict[str, Any] = {
        "run": name,
        "requests": len(load.indexes),
        "seconds": round(seconds, 2),
        "requests_per_s": round(len(load.indexes) / seconds, 1) if seconds else 0.0,
        "errors": load.errors,
        "failures": load.samples[:3],
    }
    # Connection time per request class: in a closed loop, a class that holds its connections longer (a write
    # waiting for its commit, a recommendation waiting for its computation) leaves them out of the others' use.
    held: dict[str, float] = {}
    for index, duration in zip(load.indexes, load.durations_ns, strict=True):
        held[requests[index].label] = held.get(requests[index].label, 0.0) + duration / 1e9
    result["connection_s"] = {label: round(value, 2) for label, value in sorted(held.items())}
    for label in (READ, WRITE):
        durations = [
            duration / 1e6
            for index, duration in zip(load.indexes, load.durations_ns, strict=True)
            if (requests[index].label == WRITE) == (label == WRITE)
        ]
        result[label] = {
            "count": len(durations),
            "p50_ms": round(statistics.median(durations), 1) if durations else None,
            "p99_ms": round(percentile(durations, 0.99), 1) if durations else None,
            "max_ms": round(max(durations), 1) if durations else None,
        }
    return result


def run(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    rng = random.Random(args.seed)
    with ExitStack() as stack:
        database_url = stack.enter_context(stores.fresh_postgres_database(args.postgres_admin_url, args.database_name))
        redis = stack.enter_context(stores.own_redis(workdir))
        started = stack.enter_context(instances(workdir, database_url, redis.url))
        balancer = Balancer(workdir, [(f"i{n + 1}", int(url.rsplit(":", 1)[1])) for n, (url, _) in enumerate(started)])
        balancer.start()
        stack.callback(balancer.stop)
        seeded = offers(balancer.url)
        # Budgets no earlier run drew: a run's unique recommendations are computed, not found in the cache.
        budgets = iter(10_000 + rng.random() * 1000 + run for run in range(2 * args.rounds + 1))
        reads = catalog_reads if args.mix == "catalog" else service_reads(balancer.url, budgets)
        if args.warmup:
            # What a first write pays once (the writer's connection and statements, the first shared snapshot) is
            # not what writes cost a running cluster: untimed, like the reads' own first answers.
            print(f"warm-up: {args.warmup} requests with writes", file=sys.stderr)
            warmup = plan(args.warmup, args.write_share, seeded, rng, reads)
            asyncio.run(load_client.drive(balancer.url, warmup, connections=args.connections, client=args.client))
        runs = []
        # Rounds of the two runs back to back: on a shared machine whose speed drifts, each ratio compares runs
        # taken moments apart, and the median of the rounds' ratios is the figure.
        for _ in range(args.rounds):
            for name, share in (("reads only", 0.0), (f"{args.write_share:g}% offer writes", args.write_share)):
                requests = plan(args.requests, share, seeded, rng, reads)
                print(f"{name}: {len(requests)} requests over {args.connections} connections", file=sys.stderr)
                cpu_before, computed_before = instances_cpu_s(started), recommendations_computed(started)
                load = asyncio.run(
                    load_client.drive(
                        balancer.url, requests, connections=args.connections, client=args.client, timeout_s=60
                    )
                )
                computed = recommendations_computed(started)
                runs.append(
                    figures(name, requests, load)
                    | {
                        "instances_cpu_s": instances_cpu_s(started) - cpu_before,
                        "recommendations": {how: computed[how] - computed_before.get(how, 0) for how in computed},
                    }
                )
        stall = asyncio.run(import_stall(started[0][0], seeded, args.import_rows)) if args.import_rows else None
    ratios = [
        base["requests_per_s"] / mixed["requests_per_s"] if mixed["requests_per_s"] else float("inf")
        for base, mixed in zip(runs[::2], runs[1::2], strict=True)
    ]
    document = {
        "instances": INSTANCES,
        "connections": args.connections,
        "mix": args.mix,
        "runs": runs,
        "throughput_ratios": [round(ratio, 2) for ratio in ratios],
        "throughput_ratio": round(statistics.median(ratios), 2),
    }
    return document | ({"import": stall} if stall else {})


def instances_cpu_s(started: Sequence[tuple[str, int]]) -> float:
    """CPU seconds the instances have used so far: where a run with writes spends the cores it shares with reads."""
    return sum(servers.process_tree_cpu_s(pid) or 0.0 for _, pid in started)


def recommendations_computed(started: Sequence[tuple[str, int]]) -> dict[str, int]:
    """The instances' recommendation cache misses so far, by how each was answered (computed by one instance for
    all, taken from it, computed after a wait in vain): how often a new snapshot made the cluster compute again."""
    totals: dict[str, int] = {}
    for url, _ in started:
        for line in httpx.get(f"{url}/metrics", timeout=REQUEST_TIMEOUT_S).text.splitlines():
            if match := COMPUTATIONS.match(line):
                totals[match["how"]] = totals.get(match["how"], 0) + int(float(match["value"]))
    return totals


async def import_stall(url: str, seeded: Sequence[dict[str, Any]], rows: int) -> dict[str, Any]:
    """Import `rows` new offers into one instance while timing its /health/live answers, one after another."""
    # CSV, the smaller of the two forms: 10,000 rows of JSON are over the import's 4 MiB.
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for number in range(rows):
        row = seeded[0] | {"id": f"bench-import-{number}"}
        writer.writerow(["" if row.get(column) is None else row[column] for column in CSV_COLUMNS])
    body = out.getvalue().encode()
    headers = {"Content-Type": "text/csv", "X-API-Key": API_KEY}
    probes: list[float] = []
    async with httpx.AsyncClient(base_url=url, timeout=REQUEST_TIMEOUT_S) as client:
        done = asyncio.Event()

        async def probe() -> None:
            while not done.is_set():
                started = time.perf_counter()
                await client.get("/health/live")
                probes.append(time.perf_counter() - started)

        prober = asyncio.create_task(probe())
        started = time.perf_counter()
        answer = await client.post("/v1/admin/offers:bulk", content=body, headers=headers)
        seconds = time.perf_counter() - started
        done.set()
        await prober
    if answer.status_code != 200:
        raise BenchError(f"the import answered {answer.status_code}: {answer.text[:200]}")
    return {
        "rows": rows,
        "seconds": round(seconds, 2),
        "probes": len(probes),
        "longest_live_ms": round(max(probes) * 1000, 1) if probes else None,
    }


def text_report(document: dict[str, Any]) -> str:
    lines = [
        f"{document['instances']} instances behind HAProxy, {document['connections']} connections, "
        f"{document['mix']} reads"
    ]
    for result in document["runs"]:
        read, write = result["read"], result["write"]
        line = (
            f"{result['run']:>20}: {result['requests_per_s']:7.1f} req/s over {result['seconds']:.1f} s, "
            f"read p50 {read['p50_ms']} ms p99 {read['p99_ms']} ms"
        )
        if write["count"]:
            line += (
                f"; {write['count']} writes p50 {write['p50_ms']} ms p99 {write['p99_ms']} ms max {write['max_ms']} ms"
            )
        cpu_ms = 1000 * result["instances_cpu_s"] / max(1, result["requests"])
        lines.append(line + f"; errors {result['errors']}; instances' CPU {cpu_ms:.2f} ms per request")
        if computed := result["recommendations"]:
            lines.append("    recommendation misses: " + ", ".join(f"{how} {n}" for how, n in sorted(computed.items())))
        lines += [f"    {failure}" for failure in result["failures"]]
    rounds = ", ".join(f"{ratio}x" for ratio in document["throughput_ratios"])
    lines.append(
        f"throughput without writes / with writes: {document['throughput_ratio']}x (median of rounds: {rounds})"
    )
    if stall := document.get("import"):
        lines.append(
            f"import of {stall['rows']} offers: {stall['seconds']} s; longest /health/live answer meanwhile "
            f"{stall['longest_live_ms']} ms over {stall['probes']} probes"
        )
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="write_load.py", description=__doc__.split("\n\n")[0])
    stores.add_fresh_database_options(parser, name="gpu_advisor_write_bench", when="for the run")
    parser.add_argument("--requests", type=int, default=3000, help="requests per run (default 3000)")
    parser.add_argument("--connections", type=int, default=32, help="connections at once (default 32)")
    parser.add_argument("--write-share", type=float, default=6.0, help="percent of writes in the second run")
    parser.add_argument(
        "--mix",
        choices=("service", "catalog"),
        default="service",
        help="the reads: the load benchmark's mix (default) or catalog reads only (every answer a cached body)",
    )
    parser.add_argument(
        "--rounds", type=int, default=3, help="rounds of the two runs, back to back; the median ratio (default 3)"
    )
    parser.add_argument(
        "--warmup", type=int, default=1000, help="untimed requests with writes before the rounds (default 1000)"
    )
    parser.add_argument("--seed", type=int, default=26, help="random seed of the request order")
    parser.add_argument("--import-rows", type=int, default=10_000, help="offers in the import (0: no import)")
    default_client = "aiohttp" if load_client.client_available("aiohttp") else "httpx"
    parser.add_argument("--client", choices=load_client.CLIENTS, default=default_client)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON on stdout")
    args = parser.parse_args(argv)
    if args.requests < 100 or not 1 <= args.connections <= 256 or not 0 < args.write_share < 100:
        parser.error("--requests >= 100, --connections 1-256, --write-share between 0 and 100")
    if not 0 <= args.import_rows <= 10_000:
        parser.error("--import-rows between 0 and 10000 (the import's row limit)")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    servers.exit_on_sigterm()
    document = servers.run_in_workdir("write_load.py", lambda workdir: run(args, workdir))
    if isinstance(document, int):
        return document
    print(text_report(document), file=sys.stderr if args.json else sys.stdout)
    if args.json:
        print(json.dumps(document, indent=2))
    return 1 if any(result["errors"] for result in document["runs"]) else 0


if __name__ == "__main__":
    sys.exit(main())
