"""The MCP server mounted at /mcp (streamable HTTP, stateless, JSON responses)."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar.handlers import asgi
from litestar.types import Message, Receive, ReceiveMessage, Scope, Send

from api.http.problems import problem_body, send_problem
from api.http.request_context import scope_header
from api.routes.tools import MCP_PATH


@asgi(MCP_PATH, is_mount=True, copy_scope=True, include_in_schema=False)
async def mcp_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
    if scope.get("method") == "GET":
        # Stateless JSON mode never sends server-initiated messages, so a GET event stream would stay open with
        # nothing to say; the MCP transport lets a server answer 405 instead of opening one.
        await _method_not_allowed(send)
        return
    limit: int = scope["app"].state.services.settings.max_body_bytes
    # The MCP transport reads whole bodies without a limit of its own: the body is read here first, under the API's
    # limit, and refused before it is buffered when it is too large (by its Content-Length, else as it arrives).
    body = await _bounded_body(scope, receive, send, limit)
    if body is None:
        return
    # The session manager lives in the app's lifespan (it runs a task group), so it is looked up per request.
    await scope["app"].state.mcp_sessions.handle_request(scope, _replay(body, receive), _problem_errors(send))


_NOT_ALLOWED = problem_body(405, "This MCP endpoint keeps no event stream open; send JSON-RPC messages with POST.")
_CLOSE = [(b"connection", b"close")]


async def _method_not_allowed(send: Send) -> None:
    await send_problem(send, 405, _NOT_ALLOWED, [(b"allow", b"POST, DELETE")])


async def _too_large(send: Send, limit: int) -> None:
    # The rest of the body is not read: the connection is closed after the answer.
    body = problem_body(413, f"The request body is larger than the {limit} bytes this operation accepts.")
    await send_problem(send, 413, body, _CLOSE)


async def _bounded_body(scope: Scope, receive: Receive, send: Send, limit: int) -> bytes | None:
    """The whole body, or None once a 413 (or 400 for a bad Content-Length) has been answered."""
    declared = scope_header(scope, b"content-length")
    if declared is not None:
        if not declared.strip().isdigit():
            await send_problem(send, 400, problem_body(400, "Content-Length is not a number of bytes."), _CLOSE)
            return None
        if int(declared) > limit:
            await _too_large(send, limit)
            return None
    chunks: list[bytes] = []
    size = 0
    more = True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            await _too_large(send, limit)
            return None
        chunks.append(chunk)
        more = message.get("more_body", False)
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive that hands over the body read already, then waits on the client as the original does."""
    given = False

    async def replay() -> ReceiveMessage:
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


def _problem_errors(send: Send) -> Send:
    """The transport's error answers (JSON-RPC error objects) as problem documents, like every other error here."""
    held: dict[str, Any] | None = None
    parts: list[bytes] = []

    async def problem_send(message: Message) -> None:
        nonlocal held
        if message["type"] == "http.response.start" and message["status"] >= 400:
            held = dict(message)
            return
        if held is None or message["type"] != "http.response.body":
            await send(message)
            return
        parts.append(message.get("body", b""))
        if message.get("more_body", False):
            return
        status = held["status"]
        headers = [
            (name, value)
            for name, value in held.get("headers", ())
            if name.lower() not in (b"content-type", b"content-length")
        ]
        await send_problem(send, status, problem_body(status, _error_message(b"".join(parts), status)), headers)

    return problem_send


def _error_message(body: bytes, status: int) -> str:
    """The JSON-RPC error's message, when the body holds one."""
    try:
        document = msgspec.json.decode(body)
        message = document["error"]["message"]
    except (msgspec.DecodeError, KeyError, TypeError):
        return f"The MCP endpoint refused the request ({status})."
    return str(message)


ROUTES = [mcp_endpoint]
