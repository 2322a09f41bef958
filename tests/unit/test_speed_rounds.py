"""bench/speed.py's rounds: bodies no round shares, ratios against each round's own hello-world, the median round."""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.speed_scenarios import Outcome, median_round, scenarios


def outcome(scenario: str, requests_per_s: float) -> Outcome:
    return Outcome(
        scenario=scenario,
        requests=int(requests_per_s * 10),
        seconds=10.0,
        requests_per_s=requests_per_s,
        median_ms=1.0,
        p99_ms=2.0,
        max_ms=3.0,
        non_2xx=0,
        transport_errors=0,
        generator_cpu_s=0.1,
        server_cpu_s=1.0,
        cache_lookups={},
    )


def test_no_two_rounds_send_the_same_uncached_body(tmp_path: Path) -> None:
    args = argparse.Namespace(uncached_bodies=1000)
    seen: set[bytes] = set()
    for index in range(3):
        uncached = next(s for s in scenarios(tmp_path, args, 1e6, index) if s.name == "uncached")
        assert uncached.bodies_file is not None and uncached.warmup_bodies_file is not None
        bodies = [
            *uncached.bodies_file.read_bytes().splitlines(),
            *uncached.warmup_bodies_file.read_bytes().splitlines(),
        ]
        assert len(set(bodies)) == len(bodies) == 1250
        assert not seen & set(bodies), index
        seen |= set(bodies)


def test_the_median_round_is_the_middle_one_by_requests_per_second() -> None:
    rounds = [outcome("cached", 2900.0), outcome("cached", 2500.0), outcome("cached", 2700.0)]
    assert median_round(rounds).requests_per_s == 2700.0
    assert median_round(rounds[:2]).requests_per_s == 2500.0  # the lower middle of an even count
