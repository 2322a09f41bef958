"""The speed benchmark's scenarios, their request bodies and outcomes, and how one scenario is driven."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from bench import figures, load_client, servers, wrk
from bench.recommend_latency import WORKLOADS


@dataclass(frozen=True)
class Scenario:
    name: str
    method: str
    path: str
    body: bytes | None = None  # one body for every request
    bodies_file: Path | None = None  # or one per request, a line each (the measured run)
    warmup_bodies_file: Path | None = None  # those of the warm-up


@dataclass(frozen=True)
class Outcome:
    """One measured run of a scenario."""

    scenario: str
    requests: int
    seconds: float
    requests_per_s: float
    median_ms: float | None
    p99_ms: float | None
    max_ms: float | None
    non_2xx: int
    transport_errors: int
    generator_cpu_s: float
    server_cpu_s: float | None
    cache_lookups: dict[str, float]


def encode(body: dict[str, Any]) -> bytes:
    return msgspec.json.encode(body)


def unique_bodies(count: int, budget: float, offset: int) -> list[bytes]:
    """`count` recommendation bodies never sent before, numbered from `offset` (the warm-up takes other numbers)."""
    bodies = []
    for index in range(offset, offset + count):
        step = index // 2
        figure = step % FIGURE_STEPS + 1
        if index % 2 == 0:
            workload = {**WORKLOADS[0][1]["workload"], "concurrency": 32 + figure}
        else:
            workload = {**WORKLOADS[5][1]["workload"], "images_per_hour": 417 + figure}
        # budget + step * 0.001 (rounded) differs for every step: no id repeats, the answer is the same.
        bodies.append(
            encode({"workload": workload, "constraints": {"max_usd_per_hour": round(budget + step / 1000, 3)}})
        )
    return bodies


def scenarios(workdir: Path, args: argparse.Namespace, budget: float, round_index: int) -> list[Scenario]:
    """The scenarios of one round; each round's uncached bodies (and their warm-up's) are numbers no round shares."""
    warmup_count = args.uncached_bodies // 4
    first = round_index * (args.uncached_bodies + warmup_count)
    files = {}
    for name, count, offset in [("uncached", args.uncached_bodies, warmup_count), ("warmup", warmup_count, 0)]:
        bodies = unique_bodies(count, budget, first + offset)
        files[name] = workdir / f"{name}-bodies-{round_index}.jsonl"
        files[name].write_bytes(b"\n".join(bodies) + b"\n")
    return [
        Scenario("hello-world", "GET", "/health/live"),
        Scenario("gpu", "GET", "/v1/gpus/h100-sxm"),
        Scenario("cached", "POST", "/v1/recommendations", body=encode(CACHED_BODY)),
        Scenario(
            "uncached",
            "POST",
            "/v1/recommendations",
            bodies_file=files["uncached"],
            warmup_bodies_file=files["warmup"],
        ),
    ]


def scenario_label(scenario: Scenario) -> str:
    suffix = {
        "hello-world": " (hello-world)",
        "cached": " (cached)",
        "uncached": " (uncached)",
    }.get(scenario.name, "")
    return f"{scenario.method} {scenario.path}{suffix}"


def check_scenarios(server: servers.LiveServer, items: Sequence[Scenario]) -> None:
    for scenario in items:
        body = scenario.body
        if scenario.warmup_bodies_file is not None:
            body = scenario.warmup_bodies_file.read_bytes().split(b"\n", 1)[0]  # spends one warm-up body
        response = server.client.request(
            scenario.method,
            scenario.path,
            content=body,
            headers={"Content-Type": "application/json"} if body else None,
        )
        if response.status_code != 200:
            raise servers.BenchError(
                f"{scenario.method} {scenario.path} answered {response.status_code}: {response.text[:500]}"
            )


def run_wrk(
    wrk_path: str, base_url: str, scenario: Scenario, bodies_file: Path | None, seconds: float, args: argparse.Namespace
) -> tuple[dict[str, float], float]:
    """Figures of one wrk run of a scenario (latencies in microseconds) and wrk's CPU seconds."""
    script_path = args.workdir / f"{scenario.name}.lua"
    script_path.write_text(wrk.script(scenario.method, scenario.body, bodies_file, args.threads), encoding="utf-8")
    return wrk.run(
        wrk_path,
        base_url + scenario.path,
        script_path,
        threads=args.threads,
        connections=args.connections,
        seconds=seconds,
        timeout_s=REQUEST_TIMEOUT_S,
    )


def bodies_of(path: Path | None) -> list[bytes]:
    return [line for line in path.read_bytes().split(b"\n") if line] if path else []


def asyncio_run(
    server: servers.LiveServer,
    scenario: Scenario,
    bodies_file: Path | None,
    seconds: float,
    client: str,
    connections: int,
) -> load_client.Load:
    bodies = bodies_of(bodies_file)
    if bodies:
        requests = [load_client.Request(scenario.name, scenario.method, scenario.path, body) for body in bodies]
    else:
        requests = [load_client.Request(scenario.name, scenario.method, scenario.path, scenario.body)]
    return asyncio.run(
        load_client.drive(
            server.url,
            requests,
            connections=connections,
            client=client,
            timeout_s=REQUEST_TIMEOUT_S,
            duration_s=seconds,
        )
    )


REQUEST_TIMEOUT_S = 30.0

CACHED_BODY: dict[str, Any] = WORKLOADS[0][1]  # Llama 3.1 70B inference, concurrency 32

FIGURE_STEPS = 256  # the figure of the unique bodies cycles over this many values; the budget keeps them unique


def measure(server: servers.LiveServer, scenario: Scenario, args: argparse.Namespace) -> Outcome:
    wrk = args.generator == "wrk"
    if args.warmup:  # not measured; its failures still fail the run
        if wrk:
            counts, _ = run_wrk(args.wrk, server.url, scenario, scenario.warmup_bodies_file, args.warmup, args)
            failed = counts["status"] + counts["connect"] + counts["read"] + counts["write"] + counts["timeout"]
        else:
            failed = asyncio_run(
                server, scenario, scenario.warmup_bodies_file, args.warmup, args.generator, args.connections
            ).errors
        if failed:
            raise servers.BenchError(f"{scenario_label(scenario)}: {failed:.0f} warm-up requests failed")
    lookups_before = figures.metric_totals(server.client, "gpu_advisor_cache_lookups_total", "result")
    cpu_before = server.cpu_s()
    if wrk:
        counts, generator_cpu_s = run_wrk(args.wrk, server.url, scenario, scenario.bodies_file, args.duration, args)
        requests = int(counts["requests"])
        seconds = counts["duration_us"] / 1e6
        outcome = dict(
            requests=requests,
            seconds=round(seconds, 3),
            requests_per_s=round(requests / seconds, 1),
            median_ms=round(counts["p50_us"] / 1000, 3),
            p99_ms=round(counts["p99_us"] / 1000, 3),
            max_ms=round(counts["max_us"] / 1000, 3),
            non_2xx=int(counts["status"]),
            transport_errors=int(counts["connect"] + counts["read"] + counts["write"] + counts["timeout"]),
            generator_cpu_s=round(generator_cpu_s, 2),
        )
    else:
        load = asyncio_run(server, scenario, scenario.bodies_file, args.duration, args.generator, args.connections)
        seconds = load.elapsed_ns / 1e9
        ordered = sorted(load.durations_ns)
        outcome = dict(
            requests=load.completed,
            seconds=round(seconds, 3),
            requests_per_s=round(load.completed / seconds, 1),
            median_ms=figures.ms(ordered[len(ordered) // 2]) if ordered else None,
            p99_ms=figures.ms(figures.percentile(ordered, 99)) if ordered else None,
            max_ms=figures.ms(ordered[-1]) if ordered else None,
            non_2xx=sum(1 for s in load.statuses if s and not 200 <= s < 300),
            transport_errors=sum(1 for s in load.statuses if s == 0),
            generator_cpu_s=round(load.client_cpu_s, 2),
        )
    cpu_after = server.cpu_s()
    lookups_after = figures.metric_totals(server.client, "gpu_advisor_cache_lookups_total", "result")
    server.check_alive()
    if scenario.bodies_file is not None:
        available = len(bodies_of(scenario.bodies_file))
        if outcome["requests"] + args.connections > available:
            raise servers.BenchError(
                f"{scenario_label(scenario)}: {outcome['requests']} requests but {available} unique bodies, so some "
                "were sent twice: raise --uncached-bodies"
            )
    return Outcome(
        scenario=scenario.name,
        server_cpu_s=round(cpu_after - cpu_before, 2) if cpu_after is not None and cpu_before is not None else None,
        cache_lookups={
            k: v - lookups_before.get(k, 0.0) for k, v in lookups_after.items() if v - lookups_before.get(k, 0.0)
        },
        **outcome,
    )


def measure_all(
    server: servers.LiveServer, rounds: Sequence[Sequence[Scenario]], args: argparse.Namespace
) -> list[list[Outcome]]:
    """Each round measures every scenario once, in turn: a slow minute of a shared machine then touches all alike."""
    check_scenarios(server, rounds[0])
    measured = []
    for number, items in enumerate(rounds, start=1):
        outcomes = []
        for scenario in items:
            print(
                f"round {number}/{len(rounds)}: measuring {scenario_label(scenario)} ...", file=sys.stderr, flush=True
            )
            outcomes.append(measure(server, scenario, args))
        measured.append(outcomes)
    return measured


def median_round(outcomes: Sequence[Outcome]) -> Outcome:
    """The round with the median requests per second (the lower middle one of an even count)."""
    return sorted(outcomes, key=lambda o: o.requests_per_s)[(len(outcomes) - 1) // 2]
