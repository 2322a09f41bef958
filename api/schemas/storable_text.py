"""Text no store accepts: PostgreSQL refuses U+0000 in text and JSON columns, so it is refused at decoding time."""

from __future__ import annotations

from typing import Any

import msgspec

# The one character valid JSON can carry (as the escape \u0000) that PostgreSQL rejects in text and jsonb.
UNSTORABLE = "\x00"
# The schema's pattern for request strings, so that a client (and a contract test) knows before it sends.
STORABLE_PATTERN = "^[^\\u0000]*$"
MESSAGE = "contains a NUL character (U+0000), which cannot be stored"


def unstorable_field(value: Any, path: str = "") -> str | None:
    """The dotted path of the first string (key or value) holding an unstorable character, or None."""
    if isinstance(value, str):
        return path or "body" if UNSTORABLE in value else None
    if isinstance(value, msgspec.Struct):
        value = msgspec.to_builtins(value)
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and UNSTORABLE in key:
                return here
            found = unstorable_field(item, here)
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = unstorable_field(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None


def body_may_hold_unstorable(body: bytes) -> bool:
    """A cheap test of raw JSON: U+0000 can only arrive as the escape \\u0000 (raw control bytes are invalid)."""
    return b"\\u0000" in body
