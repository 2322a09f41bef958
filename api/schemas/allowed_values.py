"""Enum errors that teach: the values a field allows, read from its type, and the one most likely meant."""

from __future__ import annotations

import re
from typing import Any

import msgspec

from domain.catalog.names import closest

# msgspec's words for a value outside a Literal/Enum ("Invalid enum value 'x'") or a tag no variant has.
_BAD_VALUE = re.compile(r"^Invalid (?:enum )?value (.+)$")
_SEGMENTS = re.compile(r"\[\d+\]|[^.\[\]]+")
_NO_DOCUMENT = object()


def _unwrap(info: msgspec.inspect.Type) -> msgspec.inspect.Type:
    while isinstance(info, msgspec.inspect.Metadata):
        info = info.type
    return info


def _members(info: msgspec.inspect.Type) -> list[msgspec.inspect.Type]:
    info = _unwrap(info)
    if isinstance(info, msgspec.inspect.UnionType):
        return [_unwrap(member) for member in info.types]
    return [info]


def _choose_variant(members: list[msgspec.inspect.Type], document: Any) -> list[msgspec.inspect.Type]:
    """The variant of a tagged union the document names by its tag, when it names one; else every member."""
    if not isinstance(document, dict):
        return members
    chosen: list[msgspec.inspect.Type] = [
        member
        for member in members
        if isinstance(member, msgspec.inspect.StructType)
        and member.tag_field is not None
        and document.get(member.tag_field) == member.tag
    ]
    return chosen or members


def _step(info: msgspec.inspect.Type, segment: str, document: Any) -> list[tuple[msgspec.inspect.Type, Any]]:
    reached: list[tuple[msgspec.inspect.Type, Any]] = []
    for member in _choose_variant(_members(info), document):
        if isinstance(member, msgspec.inspect.StructType):
            for field in member.fields:
                if field.encode_name == segment:
                    value = document.get(segment, _NO_DOCUMENT) if isinstance(document, dict) else _NO_DOCUMENT
                    reached.append((field.type, value))
        elif segment.startswith("["):
            index = int(segment[1:-1])
            item = document[index] if isinstance(document, list) and index < len(document) else _NO_DOCUMENT
            if isinstance(
                member,
                msgspec.inspect.ListType
                | msgspec.inspect.SetType
                | msgspec.inspect.FrozenSetType
                | msgspec.inspect.VarTupleType,
            ):
                reached.append((member.item_type, item))
            elif isinstance(member, msgspec.inspect.TupleType) and index < len(member.item_types):
                reached.append((member.item_types[index], item))
        elif isinstance(member, msgspec.inspect.DictType):
            value = document.get(segment, _NO_DOCUMENT) if isinstance(document, dict) else _NO_DOCUMENT
            reached.append((member.value_type, value))
    return reached


def _values(info: msgspec.inspect.Type) -> list[str]:
    found: list[str] = []
    for member in _members(info):
        if isinstance(member, msgspec.inspect.LiteralType):
            found.extend(str(value) for value in member.values)
        elif isinstance(member, msgspec.inspect.EnumType):
            found.extend(str(item.value) for item in member.cls)
    return found


def allowed_values(target: Any, path: str, document: Any = _NO_DOCUMENT) -> list[str]:
    """The values the field at `path` ("workload.kind", "constraints.vendors[0]") of `target` allows; [] if free.

    An empty path asks about `target` itself (a query parameter's type).
    """
    segments = _SEGMENTS.findall(path)
    if not segments:
        return list(dict.fromkeys(_values(msgspec.inspect.type_info(target))))
    current: list[tuple[msgspec.inspect.Type, Any]] = [(msgspec.inspect.type_info(target), document)]
    for segment in segments[:-1]:
        current = [step for info, doc in current for step in _step(info, segment, doc)]
    last = segments[-1]
    found: list[str] = []
    for info, doc in current:
        # The tag of a tagged union ("kind") is no field of any variant: its values are the variants' tags.
        found.extend(
            str(member.tag)
            for member in _members(info)
            if isinstance(member, msgspec.inspect.StructType) and member.tag_field == last and member.tag is not None
        )
        found.extend(value for info_, _ in _step(info, last, doc) for value in _values(info_))
    return list(dict.fromkeys(found))


def teach(message: str, allowed: list[str]) -> tuple[str, list[str]]:
    """A bad-value message that lists the allowed values and the closest one, and that closest value (or none)."""
    found = _BAD_VALUE.match(message)
    if found is None or not allowed:
        return message, []
    given = found.group(1)
    typed = given.strip("'\"").casefold() if given[:1] in "'\"" else given.casefold()
    meant = closest(typed, {value.casefold(): value for value in allowed}, limit=1)
    hint = f"; did you mean {meant[0]}?" if meant else ""
    return f"{given} is not one of {', '.join(allowed)}{hint}", meant
