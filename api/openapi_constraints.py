"""Constraints Litestar's schema generator drops, put back from msgspec's own schema of the request types.

Litestar keeps the count limits of an optional list but not the limits of its items (`list[Annotated[str,
Meta(max_length=...)]] | None`), and drops a zero lower bound of an optional number, so schema-valid requests were
answered 400. msgspec decodes the bodies, so its
schema is the one the server enforces.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec
from litestar.openapi.spec import OpenAPI, OpenAPIType, Schema

# JSON Schema keyword -> the Schema attribute Litestar renders it from.
_KEYWORDS = {
    "minLength": "min_length",
    "maxLength": "max_length",
    "pattern": "pattern",
    "minimum": "minimum",
    "maximum": "maximum",
    "exclusiveMinimum": "exclusive_minimum",
    "exclusiveMaximum": "exclusive_maximum",
    "minItems": "min_items",
    "maxItems": "max_items",
}


def _branches(schema: Schema) -> list[Schema]:
    """The property and its non-null alternatives (oneOf/anyOf), where Litestar may have put a constraint."""
    return [schema, *(b for b in [*(schema.one_of or []), *(schema.any_of or [])] if isinstance(b, Schema))]


def _json_branches(schema: dict[str, Any]) -> list[dict[str, Any]]:
    return [schema, *(b for b in schema.get("anyOf", []) + schema.get("oneOf", []) if b.get("type") != "null")]


def _restore(published: Schema, wanted: dict[str, Any]) -> None:
    """Copy the keywords `wanted` states (on itself or a non-null branch) that no branch of `published` has."""
    branches = _branches(published)
    for keyword, attribute in _KEYWORDS.items():
        values = [b[keyword] for b in _json_branches(wanted) if keyword in b]
        if values and all(getattr(branch, attribute) is None for branch in branches):
            setattr(published, attribute, values[0])
    wanted_items = next((b["items"] for b in _json_branches(wanted) if isinstance(b.get("items"), dict)), None)
    items = next((b.items for b in branches if b.type == OpenAPIType.ARRAY and isinstance(b.items, Schema)), None)
    if wanted_items is not None and "$ref" not in wanted_items and items is not None:
        _restore(items, wanted_items)


def restore_constraints(openapi: OpenAPI, request_types: Iterable[type[msgspec.Struct]]) -> None:
    """Give every field of the request types (and the items of its lists) the constraints msgspec enforces."""
    _, definitions = msgspec.json.schema_components(list(request_types))
    components = openapi.components.schemas if openapi.components and openapi.components.schemas else {}
    for name, definition in definitions.items():
        component = components.get(name)
        if not isinstance(component, Schema) or not component.properties:
            continue
        for field, wanted in definition.get("properties", {}).items():
            published = component.properties.get(field)
            if isinstance(published, Schema):
                _restore(published, wanted)
