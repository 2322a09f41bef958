"""Request bodies decoded strictly: `"bare_metal": 0` or `"concurrency": "8"` are errors, not coercions."""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec
from litestar import Request
from litestar.exceptions import ValidationException

from api.problems import field_in_message, plain_message

T = TypeVar("T")
# Litestar converts bodies leniently (it shares the conversion with query strings); these decoders are strict and
# built once per type.
_DECODERS: dict[Any, msgspec.json.Decoder[Any]] = {}


async def strict_body(request: Request[Any, Any, Any], target: type[T]) -> T:
    """The body as `target`, or a 400 naming the field that does not match the schema."""
    decoder = _DECODERS.get(target)
    if decoder is None:
        decoder = _DECODERS.setdefault(target, msgspec.json.Decoder(target))
    try:
        result: T = decoder.decode(await request.body())
    except msgspec.ValidationError as error:
        message = str(error)
        field = field_in_message(message) or "body"
        raise ValidationException(
            detail=message, extra=[{"key": field, "message": plain_message(message), "source": "body"}]
        ) from None
    except msgspec.DecodeError as error:
        raise ValidationException(detail=str(error), extra=[{"key": "body", "message": str(error)}]) from None
    return result
