"""The load benchmark's report: statistics per request class, the JSON document and the text table."""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from typing import Any

from bench import figures, load_client
from bench.load_requests import MIX


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
