"""How the service is served: uvicorn's h11 protocol with a bounded request head and a deadline to send it.

h11 rather than httptools: h11 holds at most `h11_max_incomplete_event_size` bytes of an unfinished request head
and answers 400 beyond it, where the httptools protocol buffers headers without a limit (16 connections with
48 MiB headers took the server from 144 to 690 MB). Neither protocol bounds the time a client may take to send
the head, so GuardedH11Protocol closes a connection whose head is not complete within the deadline (slowloris);
the body is bounded by api/http/read_deadline.py, which works under any ASGI server.

The protocol also refuses what only the server can see: a request framed by both Transfer-Encoding and
Content-Length is answered 400 and the connection closed here, at the server (RFC 9112 section 6.3: h11 alone
would read it as chunked and keep the connection, so bytes after the chunked body would run as a smuggled next
request); and beyond `max_connections` open connections a request is answered 503 and its connection closed, so a
flood of held connections cannot use up the process's file descriptors. Health probes and metrics are exempt from
that cap: an instance under such a flood is alive and should not be restarted for it.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
import time
from typing import Any

import h11
import uvicorn
from uvicorn.main import STARTUP_FAILURE
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.supervisors import Multiprocess

from api.http.problems import PROBLEM_MEDIA_TYPE, problem_body
from api.metrics import CONNECTIONS_REFUSED
from api.settings import Settings

_TIMEOUT_RESPONSE = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
# What a refused connection may still send before it is closed regardless.
LINGER_BYTES = 1 << 20
_TOO_LARGE_RESPONSE = b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
# Paths answered whatever the connection count: the kubelet's probes and Prometheus.
_UNCAPPED = (b"/health/", b"/metrics")
_BAD_FRAMING = "The request carries both Transfer-Encoding and Content-Length; send one (RFC 9112 section 6.3)."
_NOT_HTTP = "The request is not valid HTTP/1.1."
_BUSY = problem_body(503, "This instance holds as many connections as it serves at once; retry shortly.")


def _raw_problem(status: bytes, body: bytes) -> bytes:
    return (
        b"HTTP/1.1 "
        + status
        + b"\r\ncontent-type: "
        + PROBLEM_MEDIA_TYPE.encode()
        + b"\r\ncontent-length: "
        + str(len(body)).encode()
        + b"\r\nconnection: close\r\n\r\n"
        + body
    )


async def _busy(scope: Any, receive: Any, send: Any) -> None:
    """The answer beyond the connection cap (the app never sees the request)."""
    await send(
        {
            "type": "http.response.start",
            "status": 503,
            "headers": [
                (b"content-type", PROBLEM_MEDIA_TYPE.encode()),
                (b"content-length", str(len(_BUSY)).encode()),
                (b"retry-after", b"1"),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": _BUSY})


# A flood at the cap would otherwise write a log line per refused request: one line per interval says it.
_CAP_WARNING_EVERY_S = 10.0
_last_cap_warning = -_CAP_WARNING_EVERY_S


def _warn_at_cap(logger: logging.Logger, open_connections: int, cap: int) -> None:
    global _last_cap_warning
    now = time.monotonic()
    if now - _last_cap_warning >= _CAP_WARNING_EVERY_S:
        _last_cap_warning = now
        logger.warning(
            "%d connections open, the cap (GPU_ADVISOR_MAX_CONNECTIONS) is %d: refusing requests with 503 "
            "(gpu_advisor_connections_refused_total counts them)",
            open_connections,
            cap,
        )


class _CheckedConnection(h11.Connection):
    """h11's connection, with each request head shown to the protocol before uvicorn acts on it."""

    def __init__(self, check: Any, max_incomplete_event_size: int) -> None:
        super().__init__(h11.SERVER, max_incomplete_event_size=max_incomplete_event_size)
        self._check = check

    def next_event(self) -> Any:
        event = super().next_event()
        if isinstance(event, h11.Request):
            self._check(event)
        return event


class ServerConfig(uvicorn.Config):
    """uvicorn's configuration plus the deadline for a request head (module level, so workers can unpickle it)."""

    def __init__(self, app: Any, *, head_timeout_s: float, max_connections: int | None = None, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self.head_timeout_s = head_timeout_s
        self.max_connections = max_connections

    def load(self) -> None:
        super().load()
        self.loaded_app = FreezeAfterStartup(self.loaded_app)


class FreezeAfterStartup:
    """Once the app has started, keeps what startup built (the app, its schema, the catalog) out of the cyclic GC."""

    # It lives as long as the process, and a full collection under load would otherwise scan all of it, a pause of
    # 100 ms and more that every request in flight waits out.

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "lifespan":
            return await self.app(scope, receive, send)

        async def started(message: Any) -> None:
            if message["type"] == "lifespan.startup.complete":
                gc.collect()  # startup's own garbage goes first, so it is not kept for good
                gc.freeze()
            await send(message)

        return await self.app(scope, receive, started)


class _LingeringTransport:
    """A connection's transport whose close(), while the client is still sending a body, lets it read the answer."""

    # An early answer (413, 503, 408) is followed by a close; closing while the client still sends makes the kernel
    # reset the connection, and the client may lose the answer it was sent. So our side is shut for writing and
    # the rest is read and dropped (bounded) before the connection is closed.

    def __init__(self, transport: asyncio.Transport, protocol: GuardedH11Protocol) -> None:
        self._transport = transport
        self._protocol = protocol
        self._lingering = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)

    def is_closing(self) -> bool:
        return self._lingering or self._transport.is_closing()

    def close(self) -> None:
        if (
            not self._lingering
            and not self._transport.is_closing()
            and self._protocol.conn.their_state is h11.SEND_BODY
            and self._transport.can_write_eof()
        ):
            self._lingering = True
            self._transport.write_eof()
            self._transport.resume_reading()
            self._protocol.linger()
            return
        self._transport.close()


class GuardedH11Protocol(H11Protocol):
    """h11 that closes a connection whose request head does not arrive in full within the deadline, refuses
    ambiguous framing and answers 503 beyond the connection cap."""

    def __init__(self, config: uvicorn.Config, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        self._head_timeout_s: float = getattr(config, "head_timeout_s", 10.0)
        self._head_timer: asyncio.TimerHandle | None = None
        self.max_incomplete_event_size: int = (
            config.h11_max_incomplete_event_size or 16 * 1024  # h11's own default
        )
        self._discarding = 0  # bytes still read and dropped after a refusal (a lingering close), or 0
        self._max_connections: int | None = getattr(config, "max_connections", None)
        self._bad_request = _NOT_HTTP
        self.conn = _CheckedConnection(self._check_request, self.max_incomplete_event_size)

    def _check_request(self, request: h11.Request) -> None:
        """Called with each request head before uvicorn starts the app on it."""
        names = {name.lower() for name, _ in request.headers}
        if b"transfer-encoding" in names and b"content-length" in names:
            self._bad_request = _BAD_FRAMING
            raise h11.RemoteProtocolError(_BAD_FRAMING)  # uvicorn answers send_400_response and closes
        if (
            self._max_connections is not None
            and len(self.connections) > self._max_connections
            and not request.target.startswith(_UNCAPPED)
        ):
            CONNECTIONS_REFUSED.inc()
            _warn_at_cap(self.logger, len(self.connections), self._max_connections)
            self.app = _busy  # this connection's app only; its answer says close, so no request follows here

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to a request h11 (or _check_request) refused, as a problem document."""
        self._disarm_head_timer()
        self.transport.write(_raw_problem(b"400 Bad Request", problem_body(400, self._bad_request)))
        self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(_LingeringTransport(transport, self))  # type: ignore[arg-type]
        self._arm_head_timer()

    def linger(self) -> None:
        """Read and drop what the client still sends (bounded, within the head deadline), then close."""
        self._disarm_head_timer()
        self._discarding = LINGER_BYTES
        self._head_timer = self.loop.call_later(self._head_timeout_s, self.transport.close)

    def data_received(self, data: bytes) -> None:
        if self._discarding:
            self._discarding = max(0, self._discarding - len(data))
            if not self._discarding:
                self.transport.close()
            return
        # h11 bounds only a head that is still incomplete; one that arrives whole in a large read passes, so the
        # head is measured here, before h11 parses it.
        if self.conn.their_state is h11.IDLE:
            buffered = bytes(self.conn.trailing_data[0]) + data
            end = buffered.find(b"\r\n\r\n")
            if (end if end >= 0 else len(buffered)) > self.max_incomplete_event_size:
                self._refuse()
                return
        super().data_received(data)

    def _refuse(self) -> None:
        """Answer 431 and close without a reset: the rest is read and dropped after our side is shut for writing."""
        # Closing while the client still sends makes the kernel reset the connection, and the client may lose the
        # answer; the read is bounded, and within the head deadline.
        self._disarm_head_timer()
        self.transport.write(_TOO_LARGE_RESPONSE)
        if not self.transport.can_write_eof():
            self.transport.close()
            return
        self.transport.write_eof()
        self._discarding = LINGER_BYTES
        self._head_timer = self.loop.call_later(self._head_timeout_s, self.transport.close)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head_timer()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        super().handle_events()
        if self.conn.their_state is not h11.IDLE:
            # The head is complete; the body has a deadline of its own.
            self._disarm_head_timer()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            # The next request on this connection gets the same time for its head.
            self._arm_head_timer()

    def _arm_head_timer(self) -> None:
        self._disarm_head_timer()
        self._head_timer = self.loop.call_later(self._head_timeout_s, self._head_timed_out)

    def _disarm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        if self.cycle is None or self.cycle.response_complete:
            self.transport.write(_TIMEOUT_RESPONSE)
        self.transport.close()


def server_config(
    app: Any, settings: Settings, *, host: str, port: int, workers: int = 1, **kwargs: Any
) -> ServerConfig:
    """The uvicorn configuration the service runs with; `app` is an app or an import string."""
    return ServerConfig(
        app,
        head_timeout_s=settings.head_timeout_s,
        host=host,
        port=port,
        workers=workers,
        http=GuardedH11Protocol,
        h11_max_incomplete_event_size=settings.max_header_bytes,
        max_connections=settings.max_connections,
        log_level=settings.log_level.lower(),
        # The client's address comes from api/http/client_address.py (GPU_ADVISOR_TRUSTED_PROXIES), the one
        # boundary for every server; uvicorn's rule (FORWARDED_ALLOW_IPS) would be a second one.
        proxy_headers=False,
        timeout_graceful_shutdown=settings.shutdown_drain_s,
        **kwargs,
    )


def run(app: Any, settings: Settings, *, host: str, port: int, workers: int = 1, **kwargs: Any) -> None:
    """Serve until stopped (what `gpu-advisor serve` runs)."""
    config = server_config(app, settings, host=host, port=port, workers=workers, **kwargs)
    if workers > 1:
        Multiprocess(config, sockets=[config.bind_socket()]).run()
        return
    server = uvicorn.Server(config)
    server.run()
    if not server.started:
        # The port was taken or the app did not start: say so in the exit status.
        sys.exit(STARTUP_FAILURE)
