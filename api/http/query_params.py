"""Query strings: only the names a handler reads, each single-value one once, so no answer (or cache key) depends
on anything else the client wrote."""

from __future__ import annotations

import re
import weakref
from typing import Any

from litestar import Request
from litestar.params import ParameterKwarg

from api.schemas import FieldError
from api.schemas.problems import ProblemError

AnyRequest = Request[Any, Any, Any]
# Handler arguments Litestar fills from the connection itself, never from the query string.
_RESERVED = frozenset({"request", "socket", "state", "scope", "headers", "cookies", "query", "data", "body"})
_PATH_PARAMETER = re.compile(r"\{(\w+):")
# Per handler: (every query name it reads, the ones it reads a single value of). Weakly keyed by the handler
# itself: an id() outlives its object, and a later app's handler could inherit another's names.
_QUERY_NAMES: weakref.WeakKeyDictionary[Any, tuple[frozenset[str], frozenset[str]]] = weakref.WeakKeyDictionary()


def query_names(request: AnyRequest) -> tuple[frozenset[str], frozenset[str]]:
    """The query names the handler reads, all and single-valued (computed once per handler)."""
    handler = request.route_handler
    names = _QUERY_NAMES.get(handler)
    if names is None:
        dependencies = set(handler.resolve_dependencies())
        path = {match for template in handler.paths for match in _PATH_PARAMETER.findall(template)}
        every: set[str] = set()
        single: set[str] = set()
        for name, field in handler.parsed_fn_signature.parameters.items():
            kwarg = field.kwarg_definition
            if name in _RESERVED or name in dependencies or name in path:
                continue
            if kwarg is None:
                query = name
            elif isinstance(kwarg, ParameterKwarg) and not (kwarg.header or kwarg.cookie):
                query = kwarg.query or name
            else:
                continue
            every.add(query)
            if not field.is_non_string_sequence:
                single.add(query)
        names = _QUERY_NAMES.setdefault(handler, (frozenset(every), frozenset(single)))
    return names


def canonical_query(request: AnyRequest) -> tuple[tuple[str, str], ...]:
    """The parameters the handler reads, in a fixed order: what a cache key may name of the query string."""
    every, _ = query_names(request)
    return tuple(sorted(item for item in request.query_params.multi_items() if item[0] in every))


def check_query(request: AnyRequest) -> None:
    """400 naming each parameter the handler does not read, or a single-value one given more than once.

    An ignored parameter would still vary the URL (and any key built from it), so a client could fill the caches
    with copies of one answer; the pages and assets outside the API document are left alone.
    """
    handler = request.route_handler
    if not handler.include_in_schema:
        return
    every, single = query_names(request)
    counts: dict[str, int] = {}
    for name, _ in request.query_params.multi_items():
        counts[name] = counts.get(name, 0) + 1
    errors = [(name, "not a parameter of this operation") for name in sorted(counts) if name not in every]
    errors += [
        (name, f"given {counts[name]} times; give it once")
        for name in sorted(counts)
        if counts[name] > 1 and name in single
    ]
    if errors:
        raise ProblemError(
            400,
            "Invalid " + "; ".join(f"{name}: {message}" for name, message in errors),
            type_="/problems/validation",
            errors=[FieldError(field=name, message=message) for name, message in errors],
        )
