"""Every response: a request id (the client's X-Request-ID or a new one), security headers and one access log line."""

from __future__ import annotations

import contextvars
import itertools
import logging
import re
import secrets
import time
from typing import cast

from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, HTTPScope, Message, Receive, Scope, Send

log = logging.getLogger("gpu_advisor.access")

REQUEST_ID_HEADER = "X-Request-ID"
# Ids travel into logs and back to clients: only short, printable, header-safe ones are taken as given.
_ACCEPTED_ID = re.compile(r"^[A-Za-z0-9._:/+=-]{1,128}$")

request_id_var: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id", default=None)

# JSON answers are data, never documents to render or frame; HTML pages set their own policy.
_SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"strict-transport-security", b"max-age=31536000"),
]
_API_POLICY = [
    (b"content-security-policy", b"default-src 'none'; frame-ancestors 'none'"),
    (b"x-frame-options", b"DENY"),
]


# A random per-process prefix and a counter: unique across instances and restarts, and far cheaper than uuid4's
# system call on every request.
_PREFIX = secrets.token_hex(8)
_counter = itertools.count(1)


def accepted_request_id(offered: str | None) -> str:
    """The client's id when it is safe to echo and log, else a new one (32 hex digits)."""
    if offered and _ACCEPTED_ID.match(offered):
        return offered
    return f"{_PREFIX}{next(_counter):016x}"


class RequestContextMiddleware(ASGIMiddleware):
    """Outermost layer: tags the request, adds headers to whatever answers (429s and errors too), logs it."""

    scopes = ("http",)  # type: ignore[assignment]

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        offered = None
        for name, value in scope.get("headers", ()):
            if name == b"x-request-id":
                offered = value.decode("latin-1")
                break
        request_id = accepted_request_id(offered)
        token = request_id_var.set(request_id)
        started = time.perf_counter()
        status = 500

        async def send_with_headers(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = list(message.get("headers", ()))
                present = {name.lower() for name, _ in headers}
                headers.append((b"x-request-id", request_id.encode()))
                headers.extend(_SECURITY_HEADERS)
                if b"content-security-policy" not in present:
                    headers.extend(_API_POLICY)
                message["headers"] = headers
            await send(message)

        try:
            await next_app(scope, receive, send_with_headers)
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
            request_id_var.reset(token)
