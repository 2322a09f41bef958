"""Request bodies, checked before anything reads them: the media type (415), then a strict decode (400)."""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec
from litestar import Request
from litestar.exceptions import ValidationException

from api.http.request_context import scope_header
from api.schemas.allowed_values import allowed_values, teach
from api.schemas.json_numbers import convert_with_integral_floats, wants_int_not_float
from api.schemas.problems import ProblemError, field_in_message, plain_message
from api.schemas.storable_text import MESSAGE, body_may_hold_unstorable, unstorable_field

T = TypeVar("T")
AnyRequest = Request[Any, Any, Any]

JSON = "application/json"
# Handlers that read more than JSON list their media types in opt["accepts"]; handlers whose body is one Struct
# name it in opt["body"], so it is decoded (strictly, once) before Litestar's lenient conversion runs.
ACCEPTS_OPT = "accepts"
BODY_OPT = "body"
_DECODED = "strict_body"

# Litestar converts bodies leniently (it shares the conversion with query strings: `"bare_metal": 0` would pass);
# these decoders are strict and built once per type.
_DECODERS: dict[Any, msgspec.json.Decoder[Any]] = {}


def media_type(request: AnyRequest) -> str:
    """The body's media type without parameters, lower-cased; "" when none was sent."""
    return (scope_header(request.scope, b"content-type") or "").split(";")[0].strip().lower()


async def strict_body(request: AnyRequest, target: type[T]) -> T:
    """The body as `target`, or a 400 naming the field that does not match the schema."""
    # The scope's own state mapping: request.state builds a State object on every access.
    state: dict[str, Any] = request.scope.setdefault("state", {})
    decoded = state.get(_DECODED)
    if isinstance(decoded, target):
        return decoded
    decoder = _DECODERS.get(target)
    if decoder is None:
        decoder = _DECODERS.setdefault(target, msgspec.json.Decoder(target))
    body = await request.body()
    try:
        try:
            result: T = decoder.decode(body)
        except msgspec.ValidationError as error:
            if not wants_int_not_float(error):
                raise
            # Rare, so paid only here: decode again reading 2.0 as 2, as JSON Schema does.
            result = convert_with_integral_floats(msgspec.json.decode(body), target)
    except msgspec.ValidationError as error:
        message = str(error)
        field = field_in_message(message) or "body"
        raise ValidationException(
            detail=message, extra=[{**_taught(target, field, plain_message(message), body), "source": "body"}]
        ) from None
    except msgspec.DecodeError as error:
        message = plain_message(str(error))
        raise ValidationException(detail=message, extra=[{"key": "body", "message": message}]) from None
    if body_may_hold_unstorable(body) and (unstorable := unstorable_field(result)) is not None:
        raise ValidationException(
            detail=f"{unstorable} {MESSAGE}", extra=[{"key": unstorable, "message": MESSAGE, "source": "body"}]
        )
    state[_DECODED] = result
    return result


def _taught(target: Any, field: str, message: str, body: bytes) -> dict[str, Any]:
    """The error of one field; a value outside an enum also gets the values allowed and the closest one."""
    allowed = allowed_values(target, field, _document(body)) if message.startswith("Invalid") else []
    taught, meant = teach(message, allowed)
    if taught == message:
        return {"key": field, "message": message}
    return {"key": field, "message": taught, "allowed": allowed, "suggestions": meant}


def _document(body: bytes) -> Any:
    try:
        return msgspec.json.decode(body)
    except msgspec.DecodeError:
        return None


async def check_body(request: AnyRequest) -> None:
    """415 for a body the operation does not read (no Content-Type is read as JSON); 400 for a bad one."""
    if request.method not in ("POST", "PUT", "PATCH"):
        return
    opt = request.route_handler.opt
    accepted = opt.get(ACCEPTS_OPT, (JSON,))
    media = media_type(request)
    if media and media not in accepted and not (JSON in accepted and media.endswith("+json")):
        raise ProblemError(
            415,
            f"Send the body as {' or '.join(accepted)}, not {media!r}.",
            type_="/problems/unsupported-media-type",
        )
    if (target := opt.get(BODY_OPT)) is not None:
        await strict_body(request, target)
