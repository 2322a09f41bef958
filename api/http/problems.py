"""RFC 9457 problem responses: the exception that carries one, the handlers that render every error as one."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from http import HTTPStatus
from typing import Any

import msgspec
from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Example
from litestar.types import HTTPResponseBodyEvent, HTTPResponseStartEvent, Send

from api.schemas import FieldError, Problem
from api.schemas.allowed_values import allowed_values, teach
from api.schemas.problems import ProblemError, field_in_message, plain_message
from domain.workloads.resolve import WorkloadError

log = logging.getLogger(__name__)

PROBLEM_MEDIA_TYPE = "application/problem+json"
_encoder = msgspec.json.Encoder()


def not_found(kind: str, name: str, suggestions: list[str]) -> ProblemError:
    """A 404 that names what was asked for and the closest ids."""
    hint = f" Did you mean {', '.join(suggestions)}?" if suggestions else ""
    return ProblemError(
        404, f"No {kind} {name!r} in the catalog.{hint}", type_="/problems/not-found", suggestions=suggestions
    )


def invalid(field: str, message: str) -> ProblemError:
    """A 400 for one bad input."""
    return ProblemError(
        400,
        f"Invalid {field}: {message}",
        type_="/problems/validation",
        errors=[FieldError(field=field, message=message)],
    )


def problem_response(problem: Problem, headers: dict[str, str] | None = None) -> Response[bytes]:
    """Encode a problem with its media type."""
    return Response(
        content=_encoder.encode(problem), status_code=problem.status, media_type=PROBLEM_MEDIA_TYPE, headers=headers
    )


def rate_limited_body(per_minute: int, retry_after_s: int) -> bytes:
    """The 429 problem document (sent by the rate-limit middleware, outside the handlers)."""
    problem = Problem(
        type="/problems/rate-limited",
        title="Too Many Requests",
        status=429,
        detail=f"More than {per_minute} requests per minute from this client; retry after {retry_after_s} s.",
    )
    return _encoder.encode(problem)


def _problem_error_handler(_: Request[Any, Any, Any], exc: ProblemError) -> Response[bytes]:
    return problem_response(exc.problem, exc.headers)


_MISSING = re.compile(r"Missing required (?:[\w ]+ )?parameter '([^']+)'")


def _parameter_values(request: Request[Any, Any, Any], name: str) -> list[str]:
    """The values a query, path or header parameter allows, from the handler's signature; [] if free."""
    for argument, parameter in request.route_handler.parsed_fn_signature.parameters.items():
        kwarg = parameter.kwarg_definition
        alias = getattr(kwarg, "query", None) or getattr(kwarg, "header", None)
        if name in (argument, alias):
            try:
                return allowed_values(parameter.annotation, "")
            except (TypeError, ValueError):
                return []
    return []


def _field_errors(request: Request[Any, Any, Any], exc: ValidationException) -> list[FieldError]:
    errors = []
    for item in exc.extra if isinstance(exc.extra, list) else []:
        if not isinstance(item, dict):
            continue
        message = str(item.get("message", ""))
        key = str(item.get("key") or item.get("source") or "body")
        # Litestar names a whole body "data"; the message usually names the field inside it.
        field = (field_in_message(message) or key) if key in ("data", "body") else key
        allowed, meant = item.get("allowed"), item.get("suggestions")
        if allowed is None and item.get("source") in ("query", "path", "header"):
            allowed = _parameter_values(request, key)
            message, meant = teach(plain_message(message), allowed)
        errors.append(
            FieldError(field=field, message=plain_message(message), allowed=allowed or None, suggestions=meant or None)
        )
    if not errors and (missing := _MISSING.search(str(exc.detail))):
        errors.append(FieldError(field=missing.group(1), message="required"))
    return errors or [FieldError(field="request", message=str(exc.detail))]


def _validation_handler(request: Request[Any, Any, Any], exc: ValidationException) -> Response[bytes]:
    errors = _field_errors(request, exc)
    meant = [value for error in errors for value in error.suggestions or ()]
    problem = Problem(
        type="/problems/validation",
        title="Bad Request",
        status=400,
        detail="Invalid " + "; ".join(f"{error.field}: {error.message}" for error in errors),
        errors=errors,
        suggestions=meant or None,
    )
    return problem_response(problem)


def _workload_error_handler(_: Request[Any, Any, Any], exc: WorkloadError) -> Response[bytes]:
    problem = Problem(
        type="/problems/validation",
        title="Bad Request",
        status=400,
        detail=f"Invalid {exc.field}: {exc.message}",
        errors=[FieldError(field=exc.field, message=exc.message)],
        suggestions=exc.suggestions or None,
    )
    return problem_response(problem)


def _http_error_handler(request: Request[Any, Any, Any], exc: HTTPException) -> Response[bytes]:
    status = exc.status_code
    if status >= 500:
        return _internal_error_handler(request, exc)
    detail = exc.detail if exc.detail and exc.detail != HTTPStatus(status).phrase else HTTPStatus(status).description
    if status == 400:
        # Litestar's own 400s (malformed JSON, a body it cannot read) are input errors like any other.
        problem = Problem(
            type="/problems/validation",
            title="Bad Request",
            status=400,
            detail=detail,
            errors=[FieldError(field="body", message=detail)],
        )
        return problem_response(problem, dict(exc.headers) if exc.headers else None)
    if status == 413:
        limit = request.route_handler.resolve_request_max_body_size()
        detail = f"The request body is larger than the {limit} bytes this operation accepts."
    problem = Problem(type="about:blank", title=HTTPStatus(status).phrase, status=status, detail=detail)
    return problem_response(problem, dict(exc.headers) if exc.headers else None)


def _recursion_handler(request: Request[Any, Any, Any], exc: RecursionError) -> Response[bytes]:
    # msgspec gives up on deeply nested JSON with a RecursionError: that is the client's document, not our bug.
    if "deserializ" not in str(exc):
        return _internal_error_handler(request, exc)
    message = "JSON nested too deeply"
    problem = Problem(
        type="/problems/validation",
        title="Bad Request",
        status=400,
        detail=message,
        errors=[FieldError(field="body", message=message)],
    )
    return problem_response(problem)


def _internal_error_handler(request: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
    # The client learns only that it failed; the traceback goes to the log, never into the response.
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    problem = Problem(
        type="about:blank",
        title="Internal Server Error",
        status=500,
        detail="The server failed to answer; it has been logged.",
    )
    return problem_response(problem)


EXCEPTION_HANDLERS: dict[Any, Any] = {
    ProblemError: _problem_error_handler,
    WorkloadError: _workload_error_handler,
    ValidationException: _validation_handler,
    HTTPException: _http_error_handler,
    RecursionError: _recursion_handler,
    Exception: _internal_error_handler,
}

_DESCRIPTIONS = {
    400: "Invalid input: `errors` names each bad field and says what is wrong.",
    401: "A valid X-API-Key header is required (or no key is configured: writes are disabled).",
    404: "Nothing with that id; `suggestions` lists the closest ids.",
    409: "The change clashes with what the catalog holds (e.g. a name another record has); nothing was changed.",
    413: "The request body is larger than the service accepts.",
    415: "The body's Content-Type is not one this operation reads.",
    429: "Too many requests from this client; retry after the Retry-After seconds.",
    503: "A dependency the operation needs is unavailable; retry after the Retry-After seconds.",
}

_EXAMPLES: dict[int, dict[str, Any]] = {
    400: {
        "type": "/problems/validation",
        "title": "Bad Request",
        "status": 400,
        "detail": "Invalid min_memory_gb: Expected `float` >= 0.0",
        "errors": [{"field": "min_memory_gb", "message": "Expected `float` >= 0.0"}],
    },
    401: {
        "type": "about:blank",
        "title": "Unauthorized",
        "status": 401,
        "detail": "A valid X-API-Key header is required.",
    },
    404: {
        "type": "/problems/not-found",
        "title": "Not Found",
        "status": 404,
        "detail": "No GPU 'h100x' in the catalog. Did you mean h100-sxm?",
        "suggestions": ["h100-sxm"],
    },
    409: {
        "type": "/problems/conflict",
        "title": "Conflict",
        "status": 409,
        "detail": "Nothing was changed: model 'my-model': alias 'DeepSeek-R1' already names 'deepseek-r1'",
    },
    413: {
        "type": "about:blank",
        "title": "Request Entity Too Large",
        "status": 413,
        "detail": "The request body is larger than the service accepts.",
    },
    415: {
        "type": "about:blank",
        "title": "Unsupported Media Type",
        "status": 415,
        "detail": "Send application/json or text/csv, not 'text/plain'.",
    },
    429: {
        "type": "/problems/rate-limited",
        "title": "Too Many Requests",
        "status": 429,
        "detail": "More than 600 requests per minute from this client; retry after 2 s.",
    },
    503: {
        "type": "about:blank",
        "title": "Service Unavailable",
        "status": 503,
        "detail": "The database is unavailable.",
    },
}


def problem_responses(*statuses: int) -> dict[int, ResponseSpec]:
    """OpenAPI entries documenting the problem documents an operation can answer with."""
    return {
        status: ResponseSpec(
            data_container=Problem,
            generate_examples=False,
            description=_DESCRIPTIONS[status],
            media_type=PROBLEM_MEDIA_TYPE,
            examples=[Example(summary=HTTPStatus(status).phrase, value=_EXAMPLES[status])],
        )
        for status in statuses
    }


def problem_body(status: int, detail: str) -> bytes:
    """An encoded problem document for a raw ASGI answer."""
    return _encoder.encode(Problem(type="about:blank", title=HTTPStatus(status).phrase, status=status, detail=detail))


async def send_problem(send: Send, status: int, body: bytes, headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
    """Answer with an encoded problem document from below Litestar's routing (raw ASGI)."""
    start: HTTPResponseStartEvent = {
        "type": "http.response.start",
        "status": status,
        "headers": [
            (b"content-type", PROBLEM_MEDIA_TYPE.encode()),
            (b"content-length", str(len(body)).encode()),
            *headers,
        ],
    }
    await send(start)
    end: HTTPResponseBodyEvent = {"type": "http.response.body", "body": body, "more_body": False}
    await send(end)
