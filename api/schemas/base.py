"""The base Struct of the wire and what every list and error shares."""

from __future__ import annotations

import msgspec


class Wire(msgspec.Struct, kw_only=True):
    """Base of every request and response body."""


class FieldError(Wire, kw_only=True, omit_defaults=True):
    """One invalid input; `line` names the row of an imported file (CSV line, or position in a JSON list)."""

    field: str
    message: str
    line: int | None = None
    # A value outside an enum: every value the field allows, and the closest to the one sent.
    allowed: list[str] | None = None
    suggestions: list[str] | None = None


class Problem(Wire, kw_only=True, omit_defaults=True):
    """RFC 9457 problem details, the body of every error."""

    type: str
    title: str
    status: int
    detail: str
    instance: str | None = None
    errors: list[FieldError] | None = None
    suggestions: list[str] | None = None


class Page(Wire):
    """Paging of a list that can grow."""

    total: int
    limit: int
    offset: int
