"""Protocol limits of the served app (api/server.py, api/http/read_deadline.py): a bounded request head, deadlines for
the head and the body, and no endless MCP event stream. Spoken to over raw sockets, as a hostile client would."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import msgspec
import pytest
import uvicorn
from litestar import Litestar
from litestar.testing import AsyncTestClient

from api.app import create_app
from api.server import server_config
from api.settings import Settings
from tests.conftest import free_port

# Short deadlines so that the tests wait little; the sockets' own timeouts are far longer, so a server that never
# lets go fails the test instead of passing by luck.
SETTINGS = Settings(rate_limit_per_minute=0, head_timeout_s=0.5, body_timeout_s=0.5, max_header_bytes=16_384)
SOCKET_TIMEOUT_S = 30


@pytest.fixture(scope="module")
def port(private_sqlite_url: str) -> Iterator[int]:
    settings = msgspec.structs.replace(SETTINGS, database_url=private_sqlite_url)
    chosen = free_port()
    server = uvicorn.Server(server_config(create_app(settings), settings, host="127.0.0.1", port=chosen))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    yield chosen
    server.should_exit = True
    thread.join(timeout=20)


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=SOCKET_TIMEOUT_S)
    return sock


def read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a socket timeout fails the test)."""
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def test_an_oversized_request_head_is_refused(port: int) -> None:
    with connect(port) as sock:
        sock.sendall(b"GET /health/live HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n")
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 431"), answer[:200]


def test_a_head_that_never_completes_is_cut_off(port: int) -> None:
    with connect(port) as sock:
        sock.sendall(b"GET /health/live HTTP/1.1\r\nHost: x\r\n")
        answer = read_all(sock)
    assert answer in (b"", b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")


def test_a_slow_head_on_a_kept_alive_connection_is_cut_off(port: int) -> None:
    with connect(port) as sock:
        sock.sendall(b"GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n")
        first = sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200"), first[:200]
        sock.sendall(b"GET /health/live HTTP/1.1\r\n")
        assert b"HTTP/1.1 200" not in read_all(sock)


def test_a_body_that_stops_arriving_is_a_408_problem(port: int) -> None:
    with connect(port) as sock:
        sock.sendall(
            b"POST /v1/recommendations HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b'Content-Length: 200\r\n\r\n{"workload": '
        )
        answer = read_all(sock)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), answer[:300]
    assert b"application/problem+json" in head
    assert msgspec.json.decode(body)["status"] == 408


def test_ordinary_requests_pass(port: int) -> None:
    body = b'{"workload": {"kind": "inference", "model": "llama-3.1-8b"}}'
    with connect(port) as sock:
        sock.sendall(
            b"POST /v1/recommendations HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 200"), answer[:300]


async def test_get_mcp_opens_no_event_stream(client: AsyncTestClient[Litestar]) -> None:
    response = await client.get("/mcp", headers={"Accept": "text/event-stream"})
    assert response.status_code == 405
    assert response.headers["content-type"].startswith("application/problem+json")
    assert "POST" in response.headers["allow"]
