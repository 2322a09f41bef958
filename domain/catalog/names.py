"""Closest names by edit distance: the "did you mean" of unknown ids, aliases and enum values."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

# How many edits a name may be from what it meant, per character typed (at least one edit is always allowed).
EDITS_PER_CHARACTER = 0.4


def _distances(typed: str, candidate: str, limit: int) -> tuple[int, int, int] | None:
    """(edits to the best prefix of `candidate`, minus the letters both start with, edits to all of it), or None.

    The prefix distance ranks "h100x" next to every h100 variant (one edit from "h100"), not after "v100", which is as
    few edits from the whole "h100x" as "h100-pcie" is many: a typed name is usually the start of what was meant.
    """
    if len(typed) - len(candidate) > limit:
        return None
    previous = list(range(len(candidate) + 1))
    for i, letter in enumerate(typed, start=1):
        current = [i]
        for j, other in enumerate(candidate, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (letter != other)))
        if min(current) > limit:
            return None
        previous = current
    best_prefix = min(previous)
    if best_prefix > limit:
        return None
    common = next((i for i, (a, b) in enumerate(zip(typed, candidate, strict=False)) if a != b), None)
    return best_prefix, -(min(len(typed), len(candidate)) if common is None else common), previous[-1]


def closest(typed: str, names: Mapping[str, str] | Iterable[str], limit: int = 3) -> list[str]:
    """What `typed` most likely meant: the values of `names` (key -> value, or plain names) fewest edits away.

    Ranked by edits to the start of a key, then by the letters it starts with as typed, then by edits to the whole
    key, then by the value; keys should be folded the way
    `typed` is. A name more edits away than EDITS_PER_CHARACTER of its length suggests nothing.
    """
    pairs = names.items() if isinstance(names, Mapping) else ((name, name) for name in names)
    allowed = max(1, int(len(typed) * EDITS_PER_CHARACTER))
    best: dict[str, tuple[int, int, int]] = {}
    for key, value in pairs:
        found = _distances(typed, key, allowed)
        if found is not None and (value not in best or found < best[value]):
            best[value] = found
    return sorted(best, key=lambda value: (best[value], value))[:limit]
