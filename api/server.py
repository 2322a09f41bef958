"""How the service is served: uvicorn's h11 protocol with a bounded request head and a deadline to send it.

h11 rather than httptools: h11 holds at most `h11_max_incomplete_event_size` bytes of an unfinished request head
and answers 400 beyond it, where the httptools protocol buffers headers without a limit (16 connections with
48 MiB headers took the server from 144 to 690 MB). Neither protocol bounds the time a client may take to send
the head, so GuardedH11Protocol closes a connection whose head is not complete within the deadline (slowloris);
the body is bounded by api/http/read_deadline.py, which works under any ASGI server.
"""

from __future__ import annotations

import asyncio
import gc
import sys
from typing import Any

import h11
import uvicorn
from uvicorn.main import STARTUP_FAILURE
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.supervisors import Multiprocess

from api.settings import Settings

_TIMEOUT_RESPONSE = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
# What a refused connection may still send before it is closed regardless.
LINGER_BYTES = 1 << 20
_TOO_LARGE_RESPONSE = b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


class ServerConfig(uvicorn.Config):
    """uvicorn's configuration plus the deadline for a request head (module level, so workers can unpickle it)."""

    def __init__(self, app: Any, *, head_timeout_s: float, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self.head_timeout_s = head_timeout_s

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


class GuardedH11Protocol(H11Protocol):
    """h11 that closes a connection whose request head does not arrive in full within the deadline."""

    def __init__(self, config: uvicorn.Config, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        self._head_timeout_s: float = getattr(config, "head_timeout_s", 10.0)
        self._head_timer: asyncio.TimerHandle | None = None
        self.max_incomplete_event_size: int = (
            config.h11_max_incomplete_event_size or 16 * 1024  # h11's own default
        )
        self._discarding = 0  # bytes still read and dropped after a refusal (a lingering close), or 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_head_timer()

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
        log_level=settings.log_level.lower(),
        proxy_headers=True,
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
