"""wrk, the C load generator: the Lua script of one run and the figures it prints."""

from __future__ import annotations

import re
import resource
import subprocess
from pathlib import Path

from bench import servers

INSTALL_HINT = "install it (Debian: apt-get install -y wrk) or pass --load-generator aiohttp|httpx"
RESULT_MARK = "SPEED_RESULT"
KEYS = ["requests", "duration_us", "connect", "read", "write", "status", "timeout", "p50_us", "p99_us", "max_us"]


def lua_string(text: str | bytes) -> str:
    """A Lua long-bracket string literal of `text` (the level chosen so that the text cannot close it)."""
    value = text.decode() if isinstance(text, bytes) else text
    level = 0
    while f"]{'=' * level}]" in value:
        level += 1
    return f"[{'=' * level}[{value}]{'=' * level}]"


def script(method: str, body: bytes | None, bodies_file: Path | None, threads: int) -> str:
    """The Lua script of one run: one body, or each thread taking every n-th line of `bodies_file`."""
    lines = [
        "-- written by bench/wrk.py for one wrk run",
        f"wrk.method = {lua_string(method)}",
    ]
    if body is not None or bodies_file is not None:
        lines.append('wrk.headers["Content-Type"] = "application/json"')
    if body is not None:
        lines.append(f"wrk.body = {lua_string(body)}")
    if bodies_file is not None:
        lines += [
            "local next_thread = 0",
            "function setup(thread)",
            "  thread:set('tid', next_thread)",
            "  next_thread = next_thread + 1",
            "end",
            "function init(args)",
            "  bodies, count, sent = {}, 0, 0",
            "  local line_number = 0",
            f"  for line in io.lines({lua_string(str(bodies_file))}) do",
            f"    if line_number % {threads} == tid then count = count + 1; bodies[count] = line end",
            "    line_number = line_number + 1",
            "  end",
            "end",
            "function request()",
            "  sent = sent + 1",
            "  return wrk.format(nil, nil, nil, bodies[(sent - 1) % count + 1])",
            "end",
        ]
    lines += [
        "function done(summary, latency, requests)",
        "  local e = summary.errors",
        f'  io.write(string.format("{RESULT_MARK} %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f\\n",',
        "    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,",
        "    latency:percentile(50), latency:percentile(99), latency.max))",
        "end",
    ]
    return "\n".join(lines) + "\n"


def run(
    wrk: str,
    url: str,
    script_path: Path,
    *,
    threads: int,
    connections: int,
    seconds: float,
    timeout_s: float,
) -> tuple[dict[str, float], float]:
    """Figures of one wrk run of the script at `script_path` (latencies in microseconds) and wrk's CPU seconds."""
    command = [
        wrk,
        f"-t{threads}",
        f"-c{connections}",
        f"-d{max(1, round(seconds))}s",
        f"--timeout={timeout_s:g}s",
        "-s",
        str(script_path),
        url,
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 60, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    match = re.search(rf"^{RESULT_MARK} (.*)$", done.stdout, re.MULTILINE)
    if done.returncode != 0 or match is None:
        raise servers.BenchError(f"wrk failed (exit {done.returncode}): {done.stderr.strip() or done.stdout}")
    return dict(zip(KEYS, (float(v) for v in match.group(1).split()), strict=True)), cpu_s
