"""Which Content-Type a request body may have: checked before anything reads the body."""

from __future__ import annotations

from typing import Any

from litestar import Request

from api.problems import ProblemError

JSON = "application/json"
# Handlers that read more than JSON list their media types in opt["accepts"].
ACCEPTS_OPT = "accepts"


def media_type(request: Request[Any, Any, Any]) -> str:
    """The body's media type without parameters, lower-cased; "" when none was sent."""
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


async def require_readable_body(request: Request[Any, Any, Any]) -> None:
    """415 for a body sent as something the operation does not read (no Content-Type is read as JSON)."""
    if request.method not in ("POST", "PUT", "PATCH"):
        return
    accepted = request.route_handler.opt.get(ACCEPTS_OPT, (JSON,))
    media = media_type(request)
    if media and media not in accepted and not (JSON in accepted and media.endswith("+json")):
        raise ProblemError(
            415,
            f"Send the body as {' or '.join(accepted)}, not {media!r}.",
            type_="/problems/unsupported-media-type",
        )
