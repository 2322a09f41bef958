"""The MCP server mounted at /mcp (streamable HTTP, stateless, JSON responses)."""

from __future__ import annotations

from litestar.handlers import asgi
from litestar.types import Receive, Scope, Send

from api.http.problems import problem_body, send_problem
from api.routes.tools import MCP_PATH


@asgi(MCP_PATH, is_mount=True, copy_scope=True, include_in_schema=False)
async def mcp_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
    if scope.get("method") == "GET":
        # Stateless JSON mode never sends server-initiated messages, so a GET event stream would stay open with
        # nothing to say; the MCP transport lets a server answer 405 instead of opening one.
        await _method_not_allowed(send)
        return
    # The session manager lives in the app's lifespan (it runs a task group), so it is looked up per request.
    await scope["app"].state.mcp_sessions.handle_request(scope, receive, send)


_NOT_ALLOWED = problem_body(405, "This MCP endpoint keeps no event stream open; send JSON-RPC messages with POST.")


async def _method_not_allowed(send: Send) -> None:
    await send_problem(send, 405, _NOT_ALLOWED, [(b"allow", b"POST, DELETE")])


ROUTES = [mcp_endpoint]
