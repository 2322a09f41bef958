"""Query strings: a single-value parameter given more than once is a 400, so no answer depends on which one won."""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.params import ParameterKwarg

from api.http.problems import invalid

AnyRequest = Request[Any, Any, Any]
# Handler arguments Litestar fills from the connection itself, never from the query string.
_RESERVED = frozenset({"request", "socket", "state", "scope", "headers", "cookies", "query", "data", "body"})
_SINGLE_VALUED: dict[int, frozenset[str]] = {}


def _single_valued(request: AnyRequest) -> frozenset[str]:
    """The query names the handler reads one value of (computed once per handler)."""
    handler = request.route_handler
    names = _SINGLE_VALUED.get(id(handler))
    if names is None:
        dependencies = set(handler.resolve_dependencies())
        found = set()
        for name, field in handler.parsed_fn_signature.parameters.items():
            kwarg = field.kwarg_definition
            if name in _RESERVED or name in dependencies or field.is_non_string_sequence:
                continue
            if kwarg is None:
                found.add(name)
            elif isinstance(kwarg, ParameterKwarg) and not (kwarg.header or kwarg.cookie):
                found.add(kwarg.query or name)
        names = _SINGLE_VALUED.setdefault(id(handler), frozenset(found))
    return names


def check_query(request: AnyRequest) -> None:
    """400 naming the parameter when a single-value one is repeated: the handler and the cache key would differ."""
    query = request.query_params
    counts: dict[str, int] = {}
    for name, _ in query.multi_items():
        counts[name] = counts.get(name, 0) + 1
    repeated = [name for name, count in counts.items() if count > 1 and name not in request.path_params]
    if not repeated:
        return
    single = _single_valued(request)
    for name in sorted(repeated):
        if name in single:
            raise invalid(name, f"given {counts[name]} times; give it once")
