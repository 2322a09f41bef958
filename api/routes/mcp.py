"""The MCP server mounted at /mcp (streamable HTTP, stateless, JSON responses)."""

from __future__ import annotations

from litestar.handlers import asgi
from litestar.types import Receive, Scope, Send

from api.routes.tools import MCP_PATH


@asgi(MCP_PATH, is_mount=True, copy_scope=True, include_in_schema=False)
async def mcp_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
    # The session manager lives in the app's lifespan (it runs a task group), so it is looked up per request.
    await scope["app"].state.mcp_sessions.handle_request(scope, receive, send)


ROUTES = [mcp_endpoint]
