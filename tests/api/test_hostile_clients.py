"""Hostile clients against a served instance (a real `gpu-advisor serve` process, spoken to over raw sockets):
trickled bodies, a flood of connections, ambiguous framing, oversized MCP bodies, and clients that go away. Each
is answered or cut off as a client's doing: never a 500 in the metrics, never a traceback in the log."""

from __future__ import annotations

import re
import select
import socket
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import httpx
import msgspec
import pytest

from bench.servers import HOST, free_port, server_env, start_server, stop_server, wait_until_ready

# Short deadlines so that the tests wait little; the sockets' own timeouts are far longer, so a server that never
# lets go fails the test instead of passing by luck.
BODY_TIMEOUT_S = 0.5
MAX_CONNECTIONS = 12
SOCKET_TIMEOUT_S = 30
# Migrating and seeding a fresh file takes far longer on a busy machine than bench's default wait allows.
STARTUP_TRIES = 600
# A trickle far slower than the minimum rate, each byte well within the old per-read deadline.
TRICKLE_EVERY_S = 0.1
MCP_HEADERS = b"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"


@dataclass(frozen=True)
class Served:
    port: int
    log: Path


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("hostile")
    port = free_port()
    env = server_env(
        f"sqlite+aiosqlite:///{folder / 'hostile.db'}",
        None,
        {
            "GPU_ADVISOR_BODY_TIMEOUT_S": str(BODY_TIMEOUT_S),
            "GPU_ADVISOR_MAX_CONNECTIONS": str(MAX_CONNECTIONS),
            "GPU_ADVISOR_LOG_LEVEL": "INFO",
            "GPU_ADVISOR_LOG_FORMAT": "json",
        },
    )
    log = folder / "server.log"
    process = start_server(port, env, log, migrate=True)
    try:
        with httpx.Client(base_url=f"http://{HOST}:{port}") as client:
            wait_until_ready(client, process, log, tries=STARTUP_TRIES)
        yield Served(port, log)
    finally:
        stop_server(process)


def connect(port: int) -> socket.socket:
    return socket.create_connection((HOST, port), timeout=SOCKET_TIMEOUT_S)


def read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a reset ends it too; a timeout fails)."""
    chunks = []
    try:
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    except ConnectionResetError:
        pass
    return b"".join(chunks)


def post_head(path: str, length: int, extra: bytes = b"Content-Type: application/json\r\n") -> bytes:
    return f"POST {path} HTTP/1.1\r\nHost: x\r\n".encode() + extra + f"Content-Length: {length}\r\n\r\n".encode()


def metric_lines(port: int, method: str, path: str) -> list[tuple[str, float]]:
    """(status, count) of the request counter for one route."""
    text = httpx.get(f"http://{HOST}:{port}/metrics").text
    pattern = re.compile(r"^gpu_advisor_requests_total\{([^}]*)\} (\S+)$", re.MULTILINE)
    found = []
    for labels, value in pattern.findall(text):
        fields = dict(re.findall(r'(\w+)="([^"]*)"', labels))
        if fields.get("method") == method and fields.get("path") == path:
            found.append((fields["status_code"], float(value)))
    return found


def wait_for_metric(port: int, method: str, path: str) -> list[tuple[str, float]]:
    """The route's counters once the server has recorded the request (it records after the client is gone)."""
    for _ in range(300):
        if lines := metric_lines(port, method, path):
            return lines
        select.select([], [], [], 0.05)
    return []


def test_a_body_trickled_under_the_minimum_rate_is_cut_off(served: Served) -> None:
    length = 200  # at one byte per TRICKLE_EVERY_S, 20 s: each byte is in time, the whole body is not
    with connect(served.port) as sock:
        sock.sendall(post_head("/v1/recommendations", length))
        sent = 0
        while sent < length:
            readable, _, _ = select.select([sock], [], [], TRICKLE_EVERY_S)
            if readable:
                break  # the server answered (or closed) before the body was complete
            try:
                sock.sendall(b" ")
            except OSError:
                break
            sent += 1
        answer = read_all(sock)
    assert sent < length, f"the whole trickled body was taken: {answer[:200]!r}"
    assert answer == b"" or answer.startswith(b"HTTP/1.1 408"), answer[:300]


def test_connections_beyond_the_cap_are_refused_and_probes_still_pass(served: Served) -> None:
    with ExitStack() as held:
        # Idle connections that sent nothing yet: each holds a descriptor until its head deadline.
        for _ in range(MAX_CONNECTIONS + 2):
            held.enter_context(connect(served.port))
        with connect(served.port) as sock:
            sock.sendall(b"GET /v1/gpus HTTP/1.1\r\nHost: x\r\n\r\n")
            refused = read_all(sock)
        with connect(served.port) as sock:
            sock.sendall(b"GET /health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            probe = read_all(sock)
    head, _, body = refused.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 503"), refused[:300]
    assert b"application/problem+json" in head and b"retry-after" in head.lower()
    assert msgspec.json.decode(body)["status"] == 503
    assert probe.startswith(b"HTTP/1.1 200"), probe[:300]
    refused_total = re.search(
        r"^gpu_advisor_connections_refused_total (\S+)$", httpx.get(f"http://{HOST}:{served.port}/metrics").text, re.M
    )
    assert refused_total and float(refused_total.group(1)) >= 1


def test_a_request_with_both_framing_headers_is_refused_and_the_connection_closed(served: Served) -> None:
    smuggled = b"GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n"
    with connect(served.port) as sock:
        sock.sendall(
            b"POST /v1/recommendations HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled
        )
        answer = read_all(sock)  # returns only once the server has closed the connection
    head, _, rest = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400"), answer[:300]
    assert b"application/problem+json" in head
    assert b"HTTP/1.1 200" not in rest, "the smuggled request was answered"


def test_an_oversized_mcp_body_is_refused_before_it_is_read(served: Served) -> None:
    with connect(served.port) as sock:
        # The head promises 4 MiB; none of it is sent, so only a refusal by length can answer in time.
        sock.sendall(post_head("/mcp", 4 << 20, MCP_HEADERS))
        answer = read_all(sock)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413"), answer[:300]
    assert b"application/problem+json" in head
    assert "65536 bytes" in msgspec.json.decode(body)["detail"]


def test_a_chunked_mcp_body_over_the_limit_is_refused(served: Served) -> None:
    chunk = b"a" * 16_384
    with connect(served.port) as sock:
        sock.sendall(
            b"POST /mcp HTTP/1.1\r\nHost: x\r\n"
            + MCP_HEADERS
            + b"Transfer-Encoding: chunked\r\n\r\n"
            + (f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n") * 5
        )
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:300]
    assert b"application/problem+json" in answer.partition(b"\r\n\r\n")[0]


def test_mcp_errors_are_problem_documents(served: Served) -> None:
    response = httpx.post(
        f"http://{HOST}:{served.port}/mcp",
        content=b"{not json",
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
    )
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["status"] == 400


def test_a_client_gone_mid_body_and_a_body_deadline_are_client_errors_not_500s(served: Served) -> None:
    with connect(served.port) as sock:
        sock.sendall(post_head("/v1/estimates", 500) + b'{"workload": ')
        # Gone before the body is complete (and before its deadline).
    with connect(served.port) as sock:
        sock.sendall(post_head("/v1/tco", 500) + b'{"workload": ')
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 408"), answer[:300]
    gone = dict(wait_for_metric(served.port, "POST", "/v1/estimates"))
    timed_out = dict(wait_for_metric(served.port, "POST", "/v1/tco"))
    assert gone and all(400 <= int(status) < 500 for status in gone), gone
    assert timed_out == {"408": 1.0}, timed_out
    log = served.log.read_text()
    assert "Traceback" not in log
    assert '"level":"ERROR"' not in log.replace(" ", ""), log[-2000:]
    # Each is recorded for what it is.
    assert "went away before sending its whole body" in log
    assert "did not arrive within its deadline" in log


def test_the_request_counter_has_no_5xx_after_all_of_this(served: Served) -> None:
    text = httpx.get(f"http://{HOST}:{served.port}/metrics").text
    assert not re.search(r'gpu_advisor_requests_total\{[^}]*status_code="5\d\d"', text), text[-3000:]
