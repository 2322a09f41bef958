"""Hostile load on one gpu-advisor instance: trickled bodies and oversized MCP posts, while probes keep asking.

Run from the repository root (loopback only; it stops by itself):

    uv run python bench/hostile_load.py                 # 1,000 trickling bodies + 200 concurrent 4 MiB /mcp posts
    uv run python bench/hostile_load.py --json
    uv run python bench/hostile_load.py --trickle 200 --mcp 50 --attack-s 20     # a smaller machine

What it does:

1. starts `gpu-advisor serve --workers 1` on a free port of 127.0.0.1 (a fresh SQLite file, in-process cache, the
   service's default protocol limits) and waits for `GET /health/ready`;
2. idle: probes `GET /health/live` on a new connection every --probe-every-s (as the kubelet does) and reads the
   server's resident memory (RSS, /proc);
3. attack, for --attack-s seconds: opens --trickle connections that each promise a 60 KB body to
   `POST /v1/recommendations` and send one byte every 2-5 s (each byte well within any per-read deadline), and
   posts --mcp bodies of --mcp-bytes to `POST /mcp` at once (a JSON-RPC tools/call with one huge argument),
   while probing and sampling RSS as before;
4. after: closes every connection it opened, waits --settle-s, probes and reads RSS again;
5. prints /health/live latency (p50, p99, max, failures) and RSS (idle, peak during, after) per phase, what became
   of the trickles (cut off by the server, or still held at the end) and the /mcp answers, and whether the
   targets hold: /health/live within 1 s, RSS within 1.5x of idle. `--json` prints the same as JSON on stdout.

A probe that gets no answer within --probe-timeout-s counts as a failure with that latency. It exits 1 when a
target is missed, 2 when the server does not come up. The client raises its own open-file limit to the hard limit
(it needs one descriptor per connection). Sized for a 2-core machine: the load is connections held, not CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import socket
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench import servers

HEALTH_TARGET_S = 1.0
RSS_TARGET_RATIO = 1.5
TRICKLE_BODY_BYTES = 60_000
TRICKLE_GAP_S = (2.0, 5.0)
OPEN_BATCH = 100  # connections opened at once, so the listen backlog is never the limit


@dataclass
class Phase:
    """One phase's probe latencies and RSS samples."""

    name: str
    latencies_s: list[float] = field(default_factory=list)
    failures: int = 0
    rss_bytes: list[int] = field(default_factory=list)
    slowest: tuple[float, float] = (0.0, 0.0)  # the slowest probe and when it started (s into the phase)
    server_cpu_s: float | None = None  # CPU the server used in the phase: how busy it was, whatever else runs
    wall_s: float = 0.0

    def summary(self) -> dict[str, Any]:
        ordered = sorted(self.latencies_s)

        def at(q: float) -> float | None:
            return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 2) if ordered else None

        return {
            "phase": self.name,
            "probes": len(ordered),
            "failures": self.failures,
            "p50_ms": round(statistics.median(ordered) * 1000, 2) if ordered else None,
            "p99_ms": at(0.99),
            "max_ms": round(ordered[-1] * 1000, 2) if ordered else None,
            "rss_mb_median": round(statistics.median(self.rss_bytes) / 2**20, 1) if self.rss_bytes else None,
            "rss_mb_peak": round(max(self.rss_bytes) / 2**20, 1) if self.rss_bytes else None,
            "slowest_probe_at_s": self.slowest[1],
            "server_cpu_s": round(self.server_cpu_s, 2) if self.server_cpu_s is not None else None,
            "wall_s": round(self.wall_s, 1),
        }


@dataclass
class Attack:
    """What the hostile connections saw."""

    trickles_opened: int = 0
    trickles_cut: Counter[str] = field(default_factory=Counter)  # by the server's first answer line, or "closed"
    trickles_held_at_end: int = 0
    trickle_refused_to_connect: int = 0
    mcp_answers: Counter[str] = field(default_factory=Counter)


def rss_bytes(pid: int) -> int:
    """Resident memory of `pid` and its descendants (Linux /proc)."""
    total = 0
    for current in servers.process_tree(pid):
        try:
            status = Path(f"/proc/{current}/status").read_text()
        except OSError:
            continue
        total += sum(int(line.split()[1]) * 1024 for line in status.splitlines() if line.startswith("VmRSS:"))
    return total


def first_line(data: bytes) -> str:
    line = data.split(b"\r\n", 1)[0].decode("latin-1")
    return " ".join(line.split()[:2]) if line else "closed"


def probe(port: int, timeout_s: float) -> float | None:
    """Seconds for `GET /health/live` on a new connection to answer 200, or None."""
    started = time.perf_counter()
    chunks = []
    try:
        with socket.create_connection((servers.HOST, port), timeout=timeout_s) as sock:
            sock.sendall(b"GET /health/live HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n")
            while chunk := sock.recv(65536):
                chunks.append(chunk)
                if time.perf_counter() - started > timeout_s:
                    return None
    except OSError:
        return None
    return time.perf_counter() - started if b"".join(chunks).startswith(b"HTTP/1.1 200") else None


def observe(port: int, pid: int, phase: Phase, seconds: float, args: argparse.Namespace) -> None:
    """Probe and sample RSS for `seconds`, in a thread of its own: the attack's event loop does not delay it."""
    started = time.monotonic()
    cpu_before = servers.process_tree_cpu_s(pid)
    while (elapsed := time.monotonic() - started) < seconds:
        phase.rss_bytes.append(rss_bytes(pid))
        latency = probe(port, args.probe_timeout_s)
        if latency is None:
            phase.failures += 1
        phase.latencies_s.append(args.probe_timeout_s if latency is None else latency)
        phase.slowest = max(phase.slowest, (phase.latencies_s[-1], round(elapsed, 1)))
        time.sleep(max(0.0, args.probe_every_s - phase.latencies_s[-1]))
    cpu_after = servers.process_tree_cpu_s(pid)
    if cpu_before is not None and cpu_after is not None:
        phase.server_cpu_s = cpu_after - cpu_before
    phase.wall_s = time.monotonic() - started


async def trickle(port: int, attack: Attack, stop: asyncio.Event) -> None:
    """One connection promising a body it sends a byte at a time, until the server lets go or the run ends."""
    try:
        reader, writer = await asyncio.open_connection(servers.HOST, port)
    except OSError:
        attack.trickle_refused_to_connect += 1
        return
    attack.trickles_opened += 1
    writer.write(
        b"POST /v1/recommendations HTTP/1.1\r\nHost: trickle\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {TRICKLE_BODY_BYTES}\r\n\r\n".encode()
    )
    answer = asyncio.ensure_future(reader.read(65536))
    stopped = asyncio.ensure_future(stop.wait())
    try:
        while True:
            done, _ = await asyncio.wait({answer, stopped}, timeout=random.uniform(*TRICKLE_GAP_S))
            if answer in done:
                attack.trickles_cut[first_line(answer.result()) if not answer.exception() else "reset"] += 1
                return
            if stopped in done:
                attack.trickles_held_at_end += 1
                return
            writer.write(b" ")
    except OSError:
        attack.trickles_cut["reset"] += 1
    finally:
        for task in (answer, stopped):
            task.cancel()
        writer.close()


async def mcp_post(port: int, body: bytes, attack: Attack, timeout_s: float) -> None:
    """One oversized JSON-RPC post to /mcp; records the answer's status line (or how it ended)."""
    try:
        async with asyncio.timeout(timeout_s):
            reader, writer = await asyncio.open_connection(servers.HOST, port)
            try:
                writer.write(
                    b"POST /mcp HTTP/1.1\r\nHost: mcp\r\nContent-Type: application/json\r\n"
                    b"Accept: application/json, text/event-stream\r\nConnection: close\r\n"
                    + f"Content-Length: {len(body)}\r\n\r\n".encode()
                )
                sending = asyncio.ensure_future(send_body(writer, body))
                try:
                    answer = await reader.read(4096)
                finally:
                    sending.cancel()
                attack.mcp_answers[first_line(answer)] += 1
            finally:
                writer.close()
    except TimeoutError:
        attack.mcp_answers["no answer in time"] += 1
    except OSError as error:
        attack.mcp_answers[type(error).__name__] += 1


async def send_body(writer: asyncio.StreamWriter, body: bytes) -> None:
    """The body in 64 KiB pieces (the client buffers no more than a piece); stops quietly when the server closes."""
    view = memoryview(body)
    try:
        for start in range(0, len(view), 65536):
            writer.write(view[start : start + 65536])
            await writer.drain()
    except OSError:
        return


def mcp_body(size: int) -> bytes:
    head = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_gpus","arguments":{"pad":"'
    tail = b'"}}}'
    return head + b"x" * max(0, size - len(head) - len(tail)) + tail


async def attack_and_observe(server: servers.LiveServer, args: argparse.Namespace) -> tuple[list[Phase], Attack]:
    port = int(server.url.rsplit(":", 1)[1])
    assert server.process is not None
    pid = server.process.pid
    idle, during, after = Phase("idle"), Phase("attack"), Phase("after")
    attack = Attack()

    await asyncio.to_thread(observe, port, pid, idle, args.idle_s, args)

    stop = asyncio.Event()
    body = mcp_body(args.mcp_bytes)
    observing = asyncio.ensure_future(asyncio.to_thread(observe, port, pid, during, args.attack_s, args))
    trickles = []
    for start in range(0, args.trickle, OPEN_BATCH):
        batch = [
            asyncio.ensure_future(trickle(port, attack, stop)) for _ in range(min(OPEN_BATCH, args.trickle - start))
        ]
        trickles += batch
        await asyncio.sleep(0.05)
    posts = [asyncio.ensure_future(mcp_post(port, body, attack, args.attack_s)) for _ in range(args.mcp)]
    await observing
    stop.set()
    await asyncio.gather(*trickles, *posts)

    await asyncio.sleep(args.settle_s)
    await asyncio.to_thread(observe, port, pid, after, args.idle_s, args)
    return [idle, during, after], attack


def verdict(phases: list[Phase]) -> dict[str, Any]:
    idle, during, after = (phase.summary() for phase in phases)
    worst_s = max(max(phase.latencies_s, default=0.0) for phase in phases[1:])
    idle_rss = idle["rss_mb_median"] or 0.0
    peak_ratio = max(during["rss_mb_peak"] or 0.0, after["rss_mb_peak"] or 0.0) / idle_rss if idle_rss else None
    return {
        "health_max_ms": round(worst_s * 1000, 2),
        "health_failures": sum(phase.failures for phase in phases[1:]),
        "health_within_1s": worst_s <= HEALTH_TARGET_S and not any(phase.failures for phase in phases[1:]),
        "rss_peak_over_idle": round(peak_ratio, 2) if peak_ratio else None,
        "rss_within_1_5x": peak_ratio is not None and peak_ratio <= RSS_TARGET_RATIO,
    }


def table(phases: list[Phase], attack: Attack, result: dict[str, Any], meta: dict[str, Any]) -> str:
    lines = [
        "hostile_load: " + ", ".join(f"{key} {value}" for key, value in meta.items()),
        f"{'phase':<8}{'probes':>8}{'fail':>6}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}{'RSS MB':>9}{'peak MB':>9}"
        f"{'CPU s':>8}{'wall s':>8}",
    ]
    for summary in (phase.summary() for phase in phases):
        lines.append(
            f"{summary['phase']:<8}{summary['probes']:>8}{summary['failures']:>6}{summary['p50_ms']!s:>10}"
            f"{summary['p99_ms']!s:>10}{summary['max_ms']!s:>10}{summary['rss_mb_median']!s:>9}"
            f"{summary['rss_mb_peak']!s:>9}{summary['server_cpu_s']!s:>8}{summary['wall_s']!s:>8}"
        )
    lines += [
        f"trickles: {attack.trickles_opened} opened ({attack.trickle_refused_to_connect} could not connect), "
        f"cut off by the server: {dict(attack.trickles_cut) or 0}, "
        f"still held at the end: {attack.trickles_held_at_end}",
        f"/mcp answers: {dict(attack.mcp_answers)}",
        f"/health/live max {result['health_max_ms']} ms, {result['health_failures']} failed "
        f"(target: within 1 s: {'met' if result['health_within_1s'] else 'MISSED'}); "
        f"RSS peak {result['rss_peak_over_idle']}x idle "
        f"(target 1.5x: {'met' if result['rss_within_1_5x'] else 'MISSED'})",
    ]
    return "\n".join(lines)


def raise_open_files_limit(needed: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else max(soft, needed)
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    if wanted < needed:
        raise servers.BenchError(f"{needed} descriptors are needed and the hard limit is {hard}")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--trickle", type=int, default=1000, help="trickling-body connections (default 1000)")
    parser.add_argument("--mcp", type=int, default=200, help="concurrent oversized /mcp posts (default 200)")
    parser.add_argument("--mcp-bytes", type=int, default=4 << 20, help="size of each /mcp body (default 4 MiB)")
    parser.add_argument("--idle-s", type=float, default=5.0, help="idle and after phases (default 5 s)")
    parser.add_argument("--attack-s", type=float, default=45.0, help="attack phase (default 45 s)")
    parser.add_argument("--settle-s", type=float, default=3.0, help="wait after the attack (default 3 s)")
    parser.add_argument("--probe-every-s", type=float, default=0.25, help="probe interval (default 0.25 s)")
    parser.add_argument("--probe-timeout-s", type=float, default=5.0, help="a probe fails after (default 5 s)")
    parser.add_argument("--json", action="store_true", help="print JSON on stdout (the table goes to stderr)")
    servers.add_server_options(parser)
    args = parser.parse_args(argv)
    if not (0 <= args.trickle <= 5000 and 0 <= args.mcp <= 1000 and 0 < args.mcp_bytes <= 64 << 20):
        parser.error("at most 5000 trickles, 1000 /mcp posts of at most 64 MiB")
    if not (0 < args.attack_s <= 600 and 0 < args.idle_s <= 120 and 0 <= args.settle_s <= 120):
        parser.error("--attack-s at most 600, --idle-s at most 120, --settle-s at most 120")
    servers.check_server_options(parser, args)
    return args


def run(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    raise_open_files_limit(args.trickle + args.mcp + 200)
    with servers.running(
        workdir, database_url=args.database_url, redis_url=args.redis_url, port=args.port, timeout_s=30.0
    ) as server:
        phases, attack = asyncio.run(attack_and_observe(server, args))
        server.check_alive()
        meta = {
            **server.facts("catalog_version"),
            "trickles": args.trickle,
            "mcp_posts": args.mcp,
            "mcp_bytes": args.mcp_bytes,
            "attack_s": args.attack_s,
            # Other work on the machine delays the probes as much as the attack does: say how busy it was.
            "load_average_1m": round(os.getloadavg()[0], 2),
            "cpus": os.cpu_count(),
        }
    result = verdict(phases)
    return {
        "meta": meta,
        "phases": [phase.summary() for phase in phases],
        "attack": {
            **asdict(attack),
            "trickles_cut": dict(attack.trickles_cut),
            "mcp_answers": dict(attack.mcp_answers),
        },
        "result": result,
        "table": table(phases, attack, result, meta),
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    servers.exit_on_sigterm()
    outcome = servers.run_in_workdir("hostile_load", lambda workdir: run(args, workdir))
    if isinstance(outcome, int):
        return outcome
    report = outcome.pop("table")
    if args.json:
        print(report, file=sys.stderr)
        print(json.dumps(outcome, indent=2))
    else:
        print(report)
    result = outcome["result"]
    return 0 if result["health_within_1s"] and result["rss_within_1_5x"] else 1


if __name__ == "__main__":
    sys.exit(main())
