"""The MCP server mounted at /mcp (streamable HTTP, stateless, JSON responses)."""

from __future__ import annotations

import msgspec
from litestar.handlers import asgi
from litestar.types import HTTPResponseBodyEvent, HTTPResponseStartEvent, Receive, Scope, Send

from api.http.problems import PROBLEM_MEDIA_TYPE
from api.routes.tools import MCP_PATH
from api.schemas import Problem


@asgi(MCP_PATH, is_mount=True, copy_scope=True, include_in_schema=False)
async def mcp_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
    if scope.get("method") == "GET":
        # Stateless JSON mode never sends server-initiated messages, so a GET event stream would stay open with
        # nothing to say; the MCP transport lets a server answer 405 instead of opening one.
        await _method_not_allowed(send)
        return
    # The session manager lives in the app's lifespan (it runs a task group), so it is looked up per request.
    await scope["app"].state.mcp_sessions.handle_request(scope, receive, send)


_NOT_ALLOWED = msgspec.json.encode(
    Problem(
        type="about:blank",
        title="Method Not Allowed",
        status=405,
        detail="This MCP endpoint keeps no event stream open; send JSON-RPC messages with POST.",
    )
)


async def _method_not_allowed(send: Send) -> None:
    headers = [
        (b"content-type", PROBLEM_MEDIA_TYPE.encode()),
        (b"content-length", str(len(_NOT_ALLOWED)).encode()),
        (b"allow", b"POST, DELETE"),
    ]
    start: HTTPResponseStartEvent = {"type": "http.response.start", "status": 405, "headers": headers}
    await send(start)
    body: HTTPResponseBodyEvent = {"type": "http.response.body", "body": _NOT_ALLOWED, "more_body": False}
    await send(body)


ROUTES = [mcp_endpoint]
