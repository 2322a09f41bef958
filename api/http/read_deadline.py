"""A deadline for reading a request body, under any ASGI server: a client that stops sending gets a 408."""

from __future__ import annotations

import asyncio

from litestar.types import (
    ASGIApp,
    Message,
    Receive,
    ReceiveMessage,
    Scope,
    Send,
)

from api.http.problems import problem_body, send_problem

_TIMEOUT_BODY = problem_body(408, "The request body did not arrive in time; send it again.")


class BodyDeadline:
    """Each receive of body bytes may wait at most `timeout_s`; then the client is answered 408 and let go."""

    def __init__(self, app: ASGIApp, timeout_s: float) -> None:
        self._app = app
        self._timeout_s = timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
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
            nonlocal timed_out, body_read
            if timed_out:
                return {"type": "http.disconnect"}
            if body_read:
                # Past the body a receive waits for the client to go away, which may rightly take long.
                return await receive()
            try:
                async with asyncio.timeout(self._timeout_s):
                    message = await receive()
            except TimeoutError:
                timed_out = True
                if not started:
                    await send_problem(send, 408, _TIMEOUT_BODY, [(b"connection", b"close")])
                return {"type": "http.disconnect"}
            if message["type"] != "http.request" or not message.get("more_body", False):
                body_read = True
            return message

        await self._app(scope, guarded_receive, guarded_send)
