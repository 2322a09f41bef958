"""A deadline for a whole request body, under any ASGI server: a client that stops sending, or trickles its body
slower than the minimum rate, gets a 408; one that goes away mid-body is recorded as gone, not as our failure."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, cast

from litestar import Request, Response
from litestar.exceptions import HTTPException
from litestar.types import (
    ASGIApp,
    Message,
    Receive,
    ReceiveMessage,
    Scope,
    Send,
)

from api.http.problems import problem_body, send_problem

log = logging.getLogger(__name__)

_TIMEOUT_BODY = problem_body(408, "The request body did not arrive in time; send it again.")
# nginx's "client closed request": no answer reaches the client, but metrics and logs need a status that says so.
CLIENT_CLOSED = 499


class BodyTimedOut(HTTPException):
    """The body did not arrive within its deadline; the 408 has been sent already."""

    status_code = 408


class ClientGone(HTTPException):
    """The client closed the connection before its body had arrived."""

    status_code = CLIENT_CLOSED


def _body_timed_out(request: Request[Any, Any, Any], _: BodyTimedOut) -> Response[bytes]:
    log.warning("%s %s: the request body did not arrive within its deadline", request.method, request.url.path)
    return Response(_TIMEOUT_BODY, status_code=408, media_type="application/problem+json")


def _client_gone(request: Request[Any, Any, Any], _: ClientGone) -> Response[bytes]:
    log.info("%s %s: the client went away before sending its whole body", request.method, request.url.path)
    return Response(b"", status_code=CLIENT_CLOSED)


EXCEPTION_HANDLERS: dict[Any, Any] = {BodyTimedOut: _body_timed_out, ClientGone: _client_gone}


class BodyDeadline:
    """The whole body must arrive within `timeout_s` plus one second per `min_rate` bytes received; else 408."""

    # A deadline per read would let a client hold the request for ever by sending one byte just before each one
    # expires; this one moves only with the bytes that actually arrived.

    def __init__(self, app: ASGIApp, timeout_s: float, min_rate: int) -> None:
        self._app = app
        self._timeout_s = timeout_s
        self._min_rate = min_rate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        loop = asyncio.get_running_loop()
        started_at = loop.time()
        received = 0
        started = False
        timed_out = False
        body_read = False

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if timed_out:
                return  # the 408 is the answer; what the app says after being cut off goes nowhere
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        async def guarded_receive() -> ReceiveMessage:
            nonlocal timed_out, body_read, received
            if timed_out:
                raise BodyTimedOut("the request body did not arrive in time")
            if body_read:
                # Past the body a receive waits for the client to go away, which may rightly take long.
                return await receive()
            deadline = started_at + self._timeout_s + received / self._min_rate
            try:
                async with asyncio.timeout_at(deadline):
                    message = await receive()
            except TimeoutError:
                timed_out = True
                if not started:
                    await send_problem(send, 408, _TIMEOUT_BODY, [(b"connection", b"close")])
                # Raised rather than a disconnect message: the app unwinds through its error handling, which
                # records a 408 instead of a failure of its own.
                raise BodyTimedOut("the request body did not arrive in time") from None
            if message["type"] == "http.disconnect":
                body_read = True
                if started:
                    return message  # an answer under way may listen for the client leaving: that is no error
                raise ClientGone("the client went away before its body arrived")
            received += len(cast("bytes", message.get("body", b"")))
            if not message.get("more_body", False):
                body_read = True
            return message

        await self._app(scope, guarded_receive, guarded_send)
