"""Where `domain.planning.recommend` spends its time on the six workloads of bench/recommend_latency.py.

Run from the repository root:

    uv run --with pyinstrument python bench/profile_recommend.py             # pyinstrument
    uv run python bench/profile_recommend.py                                 # cProfile when pyinstrument is absent
    uv run --with pyinstrument python bench/profile_recommend.py --workload 405b --tree
    uv run python bench/profile_recommend.py --calls 500 --top 40 --cprofile

Each workload is converted once and warmed up, then `--calls` recommendations per workload run under the
profiler. The output is the top `--top` functions by cumulative time, with their share of the whole profiled run and
(pyinstrument) their own time; `--tree` adds pyinstrument's call tree.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import pstats
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import msgspec
from recommend_latency import WORKLOADS

from api.adapters.storage.reference import load_reference_catalog
from api.settings import Settings
from domain.planning import RecommendationRequest, recommend
from domain.planning.facts import SHARED

WARMUP = 20


def workload_calls(calls: int, only: str | None, cold: bool = False) -> tuple[Callable[[], None], int]:
    """A function that runs `calls` recommendations of each workload (those whose name contains `only`)."""
    catalog = load_reference_catalog()
    rate = Settings().exchange_rate()
    now = datetime.now(UTC)
    requests = [msgspec.convert(body, RecommendationRequest) for name, body in WORKLOADS if not only or only in name]
    if not requests:
        raise SystemExit(f"profile_recommend: no workload name contains {only!r}")
    for request in requests:
        for _ in range(WARMUP):
            recommend(catalog, request, now=now, lang="en", rate=rate)

    def run() -> None:
        for request in requests:
            for _ in range(calls):
                if cold:
                    SHARED.clear()
                recommend(catalog, request, now=now, lang="en", rate=rate)

    return run, len(requests)


def profile_with_cprofile(run: Callable[[], None], top: int) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    run()
    profiler.disable()
    stats = pstats.Stats(profiler, stream=sys.stdout)
    stats.strip_dirs().sort_stats("cumulative").print_stats(top)


def _function_times(
    frame: Any, cumulative: dict[str, float], own: dict[str, float], active: frozenset[str] = frozenset()
) -> None:
    """Sum pyinstrument's times per function over the tree; a recursive call counts once in cumulative time."""
    if frame.is_synthetic:  # pyinstrument's [self]/[await] leaves; their time is in the parent's own time
        return
    name = f"{frame.function} ({frame.file_path_short}:{frame.line_no})"
    if name not in active:
        cumulative[name] += frame.time
    own[name] += frame.total_self_time
    for child in frame.children:
        _function_times(child, cumulative, own, active | {name})


def profile_with_pyinstrument(run: Callable[[], None], top: int, tree: bool) -> None:
    from pyinstrument import Profiler

    profiler = Profiler(interval=0.0001)
    profiler.start()
    run()
    session = profiler.stop()
    if tree:
        print(profiler.output_text(unicode=True, color=False, show_all=False))
    root = session.root_frame()
    if root is None:
        return
    cumulative: dict[str, float] = defaultdict(float)
    own: dict[str, float] = defaultdict(float)
    _function_times(root, cumulative, own)
    whole = root.time or 1.0
    print(f"top {top} functions by cumulative time ({whole:.3f} s profiled, pyinstrument)")
    print(f"  {'cum %':>6}  {'cum s':>8}  {'own %':>6}  function")
    for name, seconds in sorted(cumulative.items(), key=lambda item: -item[1])[:top]:
        print(f"  {100 * seconds / whole:5.1f}%  {seconds:8.4f}  {100 * own[name] / whole:5.1f}%  {name}")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=200, help="profiled calls per workload (default 200)")
    parser.add_argument("--top", type=int, default=25, help="functions listed (default 25)")
    parser.add_argument("--cprofile", action="store_true", help="use cProfile even when pyinstrument is installed")
    parser.add_argument("--workload", help="only the workloads whose name contains this (e.g. 405b, sdxl)")
    parser.add_argument("--tree", action="store_true", help="also print pyinstrument's call tree")
    parser.add_argument("--cold", action="store_true", help="empty the catalog's shared facts before every call")
    args = parser.parse_args(argv)
    if not 1 <= args.calls <= 100_000:
        parser.error("--calls must be between 1 and 100000")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    run, workloads = workload_calls(args.calls, args.workload, args.cold)
    started = time.perf_counter()
    run()  # unprofiled, for the per-call figure the profilers inflate
    per_call_ms = (time.perf_counter() - started) * 1e3 / (args.calls * workloads)
    print(f"{workloads} workload(s) x {args.calls} calls, {per_call_ms:.3f} ms per call without the profiler\n")
    if args.cprofile or importlib.util.find_spec("pyinstrument") is None:
        profile_with_cprofile(run, args.top)
    else:
        profile_with_pyinstrument(run, args.top, args.tree)
    return 0


if __name__ == "__main__":
    sys.exit(main())
