"""The error a use case or handler raises to answer with a problem document, and how msgspec names a bad field."""

from __future__ import annotations

import re
from http import HTTPStatus

from api.schemas import FieldError, Problem


class ProblemError(Exception):
    """Raised by a handler to answer with a problem document."""

    def __init__(
        self,
        status: int,
        detail: str,
        *,
        type_: str = "about:blank",
        errors: list[FieldError] | None = None,
        suggestions: list[str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.problem = Problem(
            type=type_,
            title=HTTPStatus(status).phrase,
            status=status,
            detail=detail,
            errors=errors,
            suggestions=suggestions,
        )
        self.headers = headers


# msgspec names the field in one of these ways: "... - at `$.workload.model`", "... unknown field `colour`",
# "... missing required field `source`".
_FIELD_IN_MESSAGE = (
    re.compile(r" - at `\$(?:\[\d+\])?\.([\w.\[\]]+)`"),
    re.compile(r"(?:unknown|missing required) field `([^`]+)`"),
)


def field_in_message(message: str) -> str | None:
    """The field a msgspec validation message is about, if it names one."""
    for pattern in _FIELD_IN_MESSAGE:
        found = pattern.search(message)
        if found:
            return found.group(1)
    return None


def plain_message(message: str) -> str:
    """A msgspec message without its location suffix."""
    return message.split(" - at `$")[0]
