"""Load a benchmark drives: many keep-alive connections at once from one asyncio client (`drive`), every request
timed."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from bench.servers import BenchError

ERROR_SAMPLES = 10
CLIENTS = ("aiohttp", "httpx")
AIOHTTP_HINT = "run the script with `uv run --with aiohttp python bench/...` or pass --client httpx"


@dataclass(frozen=True)
class Request:
    """One request of a load: its class for the report, method, path with query, JSON body."""

    label: str
    method: str
    path: str
    body: bytes | None = None
    # Sent with this request only (an API key for writes).
    headers: tuple[tuple[str, str], ...] = ()


@dataclass
class Load:
    """What `drive` recorded: per request, in completion order, its index, duration, status and end time.

    status 0 is a transport error (connection refused or reset, timeout); `samples` keeps the first failures with
    the request and the answer.
    """

    indexes: list[int] = field(default_factory=list)
    durations_ns: list[int] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    ended_ns: list[int] = field(default_factory=list)  # since started_ns
    samples: list[dict[str, Any]] = field(default_factory=list)
    started_ns: int = 0
    elapsed_ns: int = 0
    client_cpu_s: float = 0.0
    completed: int = 0
    watches: list[tuple[int, asyncio.Event]] = field(default_factory=list)

    @property
    def errors(self) -> int:
        return sum(1 for status in self.statuses if not 200 <= status < 300)

    def reached(self, count: int) -> asyncio.Event:
        """An event set once `count` requests have completed (call it inside the loop that drives the load)."""
        event = asyncio.Event()
        if self.completed >= count:
            event.set()
        else:
            self.watches.append((count, event))
            self.watches.sort(key=lambda watch: watch[0])
        return event

    def done_one(self) -> None:
        self.completed += 1
        while self.watches and self.watches[0][0] <= self.completed:
            self.watches.pop(0)[1].set()

    def note_failure(self, request: Request, status: int, answer: str) -> None:
        """Keep the first failure of each request and status, up to ERROR_SAMPLES of them."""
        sample = {
            "request": f"{request.method} {request.path}",
            "body": request.body.decode() if request.body else None,
            "status": status,
            "answer": answer[:600],
        }
        seen = any(
            s["request"] == sample["request"] and s["body"] == sample["body"] and s["status"] == status
            for s in self.samples
        )
        if not seen and len(self.samples) < ERROR_SAMPLES:
            self.samples.append(sample)


def client_available(name: str) -> bool:
    """Whether the load client library `name` can be imported here."""
    try:
        __import__(name)
    except ImportError:
        return False
    return True


async def drive(
    base_url: str,
    requests: Sequence[Request],
    *,
    connections: int,
    client: str = "aiohttp",
    timeout_s: float = 30.0,
    count: int | None = None,
    duration_s: float | None = None,
    load: Load | None = None,
    on_answer: Callable[[int, int, Mapping[str, str], bytes], None] | None = None,
) -> Load:
    """Send requests[i % len(requests)] for i = 0, 1, ... over `connections` keep-alive connections at once.

    Stops after `count` requests (default len(requests)) or, with duration_s, when that many seconds have passed.
    Every answer is read whole; anything but 2xx is a failure. `load` (fresh when None) is filled as requests
    complete, so that a task running beside this one can watch `load.completed`. `on_answer`, when given, sees
    each answer's request index, status, headers and body (to collect what the server acknowledged).
    """
    load = load or Load()
    total = len(requests) if count is None and duration_s is None else count
    next_index = 0
    headers = {"Content-Type": "application/json"}

    def take() -> int | None:
        nonlocal next_index
        if total is not None and next_index >= total:
            return None
        if deadline_ns is not None and time.perf_counter_ns() >= deadline_ns:
            return None
        index = next_index
        next_index += 1
        return index

    def headers_of(request: Request) -> dict[str, str] | None:
        sent = (headers if request.body else {}) | dict(request.headers)
        return sent or None

    def record(index: int, before: int, status: int, request: Request, failure: str | None) -> None:
        now = time.perf_counter_ns()
        load.indexes.append(index)
        load.durations_ns.append(now - before)
        load.statuses.append(status)
        load.ended_ns.append(now - load.started_ns)
        load.done_one()
        if failure is not None:
            load.note_failure(request, status, failure)

    if client == "aiohttp":
        try:
            import aiohttp
            from yarl import URL
        except ImportError:
            raise BenchError(f"aiohttp is not installed: {AIOHTTP_HINT}") from None
        urls = [URL(base_url + request.path, encoded=True) for request in requests]
        connector = aiohttp.TCPConnector(limit=connections, force_close=False)
        session = aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=timeout_s))

        async def one_aiohttp() -> None:
            while (index := take()) is not None:
                slot = index % len(requests)
                request = requests[slot]
                before = time.perf_counter_ns()
                try:
                    async with session.request(
                        request.method, urls[slot], data=request.body, headers=headers_of(request)
                    ) as response:
                        text = await response.read()
                        status = response.status
                        if on_answer is not None:
                            on_answer(index, status, response.headers, text)
                except (aiohttp.ClientError, OSError, TimeoutError) as error:
                    record(index, before, 0, request, f"{type(error).__name__}: {error}")
                    continue
                record(index, before, status, request, None if 200 <= status < 300 else text.decode(errors="replace"))

        worker = one_aiohttp
        close = session.close
    elif client == "httpx":
        limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
        async_client = httpx.AsyncClient(base_url=base_url, limits=limits, timeout=timeout_s)

        async def one_httpx() -> None:
            while (index := take()) is not None:
                request = requests[index % len(requests)]
                before = time.perf_counter_ns()
                try:
                    response = await async_client.request(
                        request.method, request.path, content=request.body, headers=headers_of(request)
                    )
                except httpx.TransportError as error:
                    record(index, before, 0, request, f"{type(error).__name__}: {error}")
                    continue
                status = response.status_code
                if on_answer is not None:
                    on_answer(index, status, response.headers, response.content)
                record(index, before, status, request, None if 200 <= status < 300 else response.text)

        worker = one_httpx
        close = async_client.aclose
    else:
        raise BenchError(f"unknown client {client!r} (one of {', '.join(CLIENTS)})")

    cpu_before = time.process_time()
    load.started_ns = time.perf_counter_ns()
    deadline_ns = load.started_ns + int(duration_s * 1e9) if duration_s is not None else None
    try:
        await asyncio.gather(*(worker() for _ in range(connections)))
    finally:
        load.elapsed_ns = time.perf_counter_ns() - load.started_ns
        load.client_cpu_s = time.process_time() - cpu_before
        await close()
    return load
