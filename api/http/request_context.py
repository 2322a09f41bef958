"""Every answer, 404s, 405s and CORS preflights included: a request id, security headers and one access log line."""

from __future__ import annotations

import contextvars
import itertools
import logging
import re
import secrets
import time
from typing import cast

from litestar.types import ASGIApp, HTTPScope, Message, Receive, Scope, Send

log = logging.getLogger("gpu_advisor.access")

REQUEST_ID_HEADER = "X-Request-ID"
# Ids travel into logs and back to clients: only short, printable, header-safe ones are taken as given.
_ACCEPTED_ID = re.compile(r"[A-Za-z0-9._:/+=-]{1,128}")
# A random per-process prefix and a counter: unique across instances and restarts (not secret: an id is a label),
# and far cheaper than uuid4's system call on every request.
_PREFIX = secrets.token_hex(8)
_counter = itertools.count(1)

request_id_var: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id", default=None)
# Headers a handler's answer varies on; CORS rewrites Vary to "Origin", so they are merged back on the way out.
vary_var: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("vary", default=None)

_SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"strict-transport-security", b"max-age=31536000"),
]
# Data is never a document to render or frame; HTML pages bring their own policy or none.
_DATA_POLICY = [
    (b"content-security-policy", b"default-src 'none'; frame-ancestors 'none'"),
    (b"x-frame-options", b"DENY"),
]


def scope_header(scope: Scope, name: bytes) -> str | None:
    """The first value of a request header (`name` lower-case) read off the scope, without building a Headers."""
    for key, value in scope["headers"]:  # type: ignore[typeddict-item]
        if key == name:
            return cast("bytes", value).decode("latin-1")
    return None


def accepted_request_id(offered: str | None) -> str:
    """The client's id when it is safe to echo and log, else a new one (32 hex digits)."""
    if offered and _ACCEPTED_ID.fullmatch(offered):
        return offered
    return f"{_PREFIX}{next(_counter):016x}"


def varies_on(header: str) -> None:
    """Record that the answer being built depends on a request header."""
    headers = vary_var.get()
    if headers is not None and header not in headers:
        headers.append(header)


def _finish_headers(raw: list[tuple[bytes, bytes]], request_id: str, vary: list[str], cors: bool) -> None:
    names = {name.lower() for name, _ in raw}
    vary_values = [part.strip() for name, value in raw if name.lower() == b"vary" for part in value.decode().split(",")]
    wanted = [*vary, *(["Origin"] if cors else [])]
    if any(header not in vary_values for header in wanted):
        raw[:] = [(name, value) for name, value in raw if name.lower() != b"vary"]
        merged = list(dict.fromkeys(value for value in [*vary_values, *wanted] if value))
        raw.append((b"vary", ", ".join(merged).encode()))
    raw.append((b"x-request-id", request_id.encode()))
    raw.extend(_SECURITY_HEADERS)
    if b"content-security-policy" in names:
        return
    content_type = next((value for name, value in raw if name.lower() == b"content-type"), b"")
    # A page without a policy of its own (the API reference) may load what it needs, but not be framed.
    raw.extend(_DATA_POLICY[1:] if content_type.startswith(b"text/html") else _DATA_POLICY)


class RequestContext:
    """Wraps the whole application (outside routing, CORS and error handling), so nothing answers without it."""

    def __init__(self, app: ASGIApp, *, cors: bool) -> None:
        self._app = app
        self._cors = cors

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        request_id = accepted_request_id(scope_header(scope, b"x-request-id"))
        vary: list[str] = []
        id_token = request_id_var.set(request_id)
        vary_token = vary_var.set(vary)
        started = time.perf_counter()
        status = 500

        async def send_with_headers(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = list(message.get("headers", ()))
                _finish_headers(headers, request_id, vary, self._cors)
                message["headers"] = headers
            await send(message)

        try:
            await self._app(scope, receive, send_with_headers)
        finally:
            if log.isEnabledFor(logging.INFO):
                method = cast("HTTPScope", scope)["method"]
                log.info(
                    "%s %s %d",
                    method,
                    scope["path"],
                    status,
                    extra={
                        "method": method,
                        "path": scope["path"],
                        "status": status,
                        "duration_ms": round((time.perf_counter() - started) * 1000, 3),
                        "client": (scope.get("client") or ("unknown",))[0],
                    },
                )
            request_id_var.reset(id_token)
            vary_var.reset(vary_token)
