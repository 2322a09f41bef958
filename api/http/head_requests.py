"""HEAD on every GET route: answered by the GET handler, its headers kept and its body dropped (RFC 9110 9.3.2)."""

from __future__ import annotations

from typing import cast

from litestar.types import ASGIApp, HTTPScope, Message, Receive, Scope, Send

from api.routes.tools import MCP_PATH

# The chat transport is a mount, not a GET route: its GET opens an event stream, so HEAD there stays HEAD.
_NOT_GET_ROUTES = (MCP_PATH,)


class HeadAsGet:
    """Litestar's HEAD handlers may not return a body, so a HEAD is asked as a GET and the body left out."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD" or scope["path"].startswith(_NOT_GET_ROUTES):  # type: ignore[typeddict-item]
            await self._app(scope, receive, send)
            return
        sent_end = False

        async def without_body(message: Message) -> None:
            nonlocal sent_end
            if message["type"] == "http.response.body":
                # Content-Length stays the GET's; the bytes are not sent, and only one (empty) body message is.
                if sent_end:
                    return
                sent_end = not message.get("more_body", False)
                message = {"type": "http.response.body", "body": b"", "more_body": not sent_end}
            await send(message)

        as_get = cast("HTTPScope", {**scope, "method": "GET"})
        await self._app(as_get, receive, without_body)
