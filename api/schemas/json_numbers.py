"""JSON numbers as JSON Schema reads them: 2.0 is an integer, though msgspec's strict decoding wants 2."""

from __future__ import annotations

import re
from typing import Any, TypeVar

import msgspec

T = TypeVar("T")
_INT_FROM_FLOAT = re.compile(r"Expected `int( \| null)?`, got `float`")
# Beyond 2**53 a float no longer names one integer.
_EXACT = 2**53


def integral_floats_as_ints(value: Any) -> Any:
    """The value with every float that has no fraction (and is exact) turned into an int."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= _EXACT:
        return int(value)
    if isinstance(value, dict):
        return {key: integral_floats_as_ints(item) for key, item in value.items()}
    if isinstance(value, list):
        return [integral_floats_as_ints(item) for item in value]
    return value


def wants_int_not_float(error: msgspec.ValidationError) -> bool:
    """Whether strict decoding failed only because an integer was written as 2.0."""
    return _INT_FROM_FLOAT.match(str(error)) is not None


def convert_with_integral_floats(document: Any, target: type[T]) -> T:
    """`document` as `target`, strictly, reading integral floats as integers (ValidationError otherwise)."""
    result: T = msgspec.convert(integral_floats_as_ints(document), target, strict=True)
    return result
