"""Facts a benchmark reads and reports: the server's /metrics counters, nearest-rank percentiles, milliseconds, the
summary of one endpoint's timed requests, aligned text tables, the HTTP results table, the platform facts and the
exit code for non-200 answers."""

from __future__ import annotations

import json
import platform
import re
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import httpx


@dataclass(frozen=True)
class HttpResult:
    """Timings of one endpoint's measured requests."""

    endpoint: str
    requests: int
    median_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float
    requests_per_s: float
    non_200: int


def metric_totals(client: httpx.Client, name: str, label: str) -> dict[str, float]:
    """The server's /metrics samples of counter `name`, summed by the value of `label` (empty when unavailable)."""
    try:
        response = client.get("/metrics")
    except httpx.TransportError:
        return {}
    if response.status_code != 200:
        return {}
    pattern = re.compile(rf'^{re.escape(name)}\{{[^}}]*\b{re.escape(label)}="([^"]*)"[^}}]*\}}\s+(\S+)$')
    totals: dict[str, float] = {}
    for line in response.text.splitlines():
        match = pattern.match(line)
        if match:
            totals[match.group(1)] = totals.get(match.group(1), 0.0) + float(match.group(2))
    return totals


# --- statistics -------------------------------------------------------------------------------------------------


def percentile(ordered: Sequence[int], percent: int) -> int:
    """Nearest-rank percentile of an ascending sequence (integer ceiling: no float rounding)."""
    rank = max(1, -(-len(ordered) * percent // 100))
    return ordered[rank - 1]


def ms(nanoseconds: float) -> float:
    """Nanoseconds as milliseconds, rounded to the microsecond."""
    return round(nanoseconds * 1e-6, 3)


def summarize(endpoint: str, durations_ns: list[int], elapsed_ns: int, non_200: int) -> HttpResult:
    """The result of requests that took durations_ns each and elapsed_ns in all."""
    ordered = sorted(durations_ns)
    return HttpResult(
        endpoint=endpoint,
        requests=len(ordered),
        median_ms=ms(statistics.median(ordered)),
        p95_ms=ms(percentile(ordered, 95)),
        p99_ms=ms(percentile(ordered, 99)),
        max_ms=ms(ordered[-1]),
        requests_per_s=round(len(ordered) / (elapsed_ns / 1e9), 1),
        non_200=non_200,
    )


# --- the report -------------------------------------------------------------------------------------------------


def render(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Header, rule and rows as aligned lines (first column left-aligned, the others right-aligned)."""
    widths = [max(len(headers[i]), *(len(row[i]) for row in rows)) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(cells)
        ).rstrip()

    return [line(headers), line(["-" * w for w in widths]), *(line(row) for row in rows)]


def http_table_lines(results: Sequence[HttpResult]) -> list[str]:
    """The lines of the table of HTTP results, one row per endpoint."""
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
    return render(headers, rows)


def platform_facts() -> dict[str, str]:
    """Python version and platform, for a report."""
    return {"python": platform.python_version(), "platform": f"{platform.system()} {platform.machine()}"}


def non_200_exit(prog: str, results: Sequence[HttpResult]) -> int:
    """1 after naming the endpoints that answered anything but 200, else 0."""
    failed = [r for r in results if r.non_200]
    if failed:
        names = ", ".join(f"{r.endpoint} ({r.non_200})" for r in failed)
        print(f"{prog}: non-200 answers: {names}", file=sys.stderr)
        return 1
    return 0


def print_outcome(outcome: dict[str, Any], text_report: Callable[[dict[str, Any]], str], as_json: bool) -> None:
    """Print a finished run: the text report, or JSON on stdout with the text on stderr."""
    report = text_report(outcome)
    if as_json:
        print(report, file=sys.stderr)
        print(json.dumps(outcome, indent=2))
    else:
        print(report)
