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
from litestar.openapi.spec import OpenAPI, OpenAPIType, Reference, Schema

from api.schemas.storable_text import STORABLE_PATTERN

# Fields of which a request must give exactly one (not null): the decoder's rule, stated in the schema.
EXACTLY_ONE = (("model", "custom_model"), ("gpu", "system"))


def _attention_is(*values: str) -> Schema:
    return Schema(required=["attention"], properties={"attention": Schema(enum=list(values))})


def _given_integers(*names: str) -> Schema:
    return Schema(required=list(names), properties={name: Schema(type=OpenAPIType.INTEGER) for name in names})


# The decoder's rules between fields of one object that JSON Schema can state (if/then). Relations between two
# numbers (kv_heads <= attention_heads, experts_per_token < routed_experts, active_params_b <= params_b) it cannot.
CONDITIONS: dict[str, tuple[Schema, ...]] = {
    "CustomModel": (
        # gqa, the default, needs kv_heads; mla needs its two low-rank figures.
        Schema(schema_if=_attention_is("mha", "mla"), schema_else=_given_integers("kv_heads")),
        Schema(schema_if=_attention_is("mla"), then=_given_integers("kv_lora_rank", "qk_rope_head_dim")),
    )
}

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
    for branch in branches:
        if (
            branch.type == OpenAPIType.STRING
            and branch.pattern is None
            and branch.enum is None
            and branch.const is None
        ):
            # Text no store accepts is refused at decoding time (api/schemas/storable_text.py): the schema says so.
            branch.pattern = STORABLE_PATTERN
    wanted_items = next((b["items"] for b in _json_branches(wanted) if isinstance(b.get("items"), dict)), None)
    items = next((b.items for b in branches if b.type == OpenAPIType.ARRAY and isinstance(b.items, Schema)), None)
    if wanted_items is not None and "$ref" not in wanted_items and items is not None:
        _restore(items, wanted_items)
    # The values of a mapping ({gpu: price}) carry their limits too.
    wanted_values = next(
        (b["additionalProperties"] for b in _json_branches(wanted) if isinstance(b.get("additionalProperties"), dict)),
        None,
    )
    mapped: Schema | None = next(
        (b.additional_properties for b in branches if isinstance(b.additional_properties, Schema)), None
    )
    if wanted_values is not None and "$ref" not in wanted_values and mapped is not None:
        _restore(mapped, wanted_values)


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
        if definition.get("additionalProperties") is False and component.additional_properties is None:
            # Unknown fields are refused (forbid_unknown_fields): the schema says so.
            component.additional_properties = False
        if name in CONDITIONS and component.all_of is None:
            component.all_of = list(CONDITIONS[name])
        for pair in EXACTLY_ONE:
            if all(name in component.properties for name in pair) and component.one_of is None:
                component.one_of = [_given(name, component.properties[name]) for name in pair]


def _given(name: str, published: Schema | Reference) -> Schema:
    """The request names `name` with a value that is not null."""
    alternatives = [*(published.one_of or []), *(published.any_of or [])] if isinstance(published, Schema) else []
    value = [b for b in alternatives or [published] if not (isinstance(b, Schema) and b.type == OpenAPIType.NULL)]
    return Schema(required=[name], properties={name: value[0] if len(value) == 1 else Schema(one_of=value)})
