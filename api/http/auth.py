"""Administrator authentication: a key from GPU_ADVISOR_API_KEYS in the X-API-Key header."""

from __future__ import annotations

import hmac
from typing import Any

from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException
from litestar.handlers.base import BaseRouteHandler

API_KEY_HEADER = "X-API-Key"
SECURITY: list[dict[str, list[str]]] = [{"apiKey": []}]


def matching_key(given: str, keys: tuple[str, ...]) -> int | None:
    """The position of the configured key equal to `given`, compared in constant time against every key."""
    found = None
    for position, key in enumerate(keys):
        # No early exit: the time taken must not tell which key, or how much of one, matched.
        if hmac.compare_digest(given.encode(), key.encode()):
            found = position
    return found


async def require_api_key(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """Guard for write routes; the key itself is never logged or echoed, only its position is remembered.

    A coroutine: Litestar runs a plain function guard on a worker thread, a hop every write paid for nothing.
    """
    keys: tuple[str, ...] = connection.app.state.services.settings.api_keys
    if not keys:
        raise NotAuthorizedException("Administrative writes are disabled: no API key is configured.")
    position = matching_key(connection.headers.get(API_KEY_HEADER, ""), keys)
    if position is None:
        raise NotAuthorizedException(f"A valid {API_KEY_HEADER} header is required.")
    connection.state.actor = f"api-key-{position + 1}"
