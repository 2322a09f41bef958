"""The service's layers: use cases and adapters never reach up into the edges.

The import graph (every import, including those under TYPE_CHECKING and inside functions) and the cycle check are
the import contract's (tests/unit/test_import_contract.py); this adds what each folder of api/ must never import.
"""

from __future__ import annotations

from tests.unit.test_import_contract import graph, within

# What each folder of api/ must never import (the edges sit above the use cases, the use cases above the adapters).
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "api.services": ("api.routes", "api.cli", "api.chat", "api.http"),
    "api.adapters": ("api.routes", "api.services", "api.cli", "api.chat"),
}


def breaches(edges: dict[str, set[str]]) -> list[str]:
    return sorted(
        f"{name} imports {target}"
        for name, targets in edges.items()
        for layer, banned in FORBIDDEN.items()
        if within(name, layer)
        for target in targets
        if any(within(target, above) for above in banned)
    )


def test_lower_layers_do_not_import_upper_ones() -> None:
    assert breaches(graph()) == []


def test_the_check_sees_imports_and_a_layer_breach() -> None:
    assert graph().get("api.app"), "the walk found no imports"
    assert breaches({"api.services.x": {"api.routes.y", "api.schemas.z"}}) == ["api.services.x imports api.routes.y"]
