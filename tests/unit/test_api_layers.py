"""The service's layers: use cases and adapters never reach up into the edges, and no import cycle in api/.

Every import counts, including those under TYPE_CHECKING and inside functions: a cycle hidden there is still one.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# What each folder of api/ must never import (the edges sit above the use cases, the use cases above the adapters).
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "api.services": ("api.routes", "api.cli", "api.chat", "api.http"),
    "api.adapters": ("api.routes", "api.services", "api.cli", "api.chat"),
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    """Every module of api/ by its dotted name."""
    return {module_name(path): path for path in sorted((ROOT / "api").rglob("*.py")) if "__pycache__" not in path.parts}


def imported(path: Path, name: str, known: set[str]) -> set[str]:
    """The api modules a module imports, wherever the import statement stands."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # `from api.x import y` imports the module api.x.y when there is one, else a name of api.x.
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target.startswith("api") and target != name:
                found.add(target)
    return found


def graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    return {name: imported(path, name, known) for name, path in found.items()}


def inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_lower_layers_do_not_import_upper_ones() -> None:
    wrong = sorted(
        f"{name} imports {target}"
        for name, targets in graph().items()
        for layer, banned in FORBIDDEN.items()
        if inside(name, layer)
        for target in targets
        if any(inside(target, above) for above in banned)
    )
    assert wrong == []


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return groups


def test_no_import_cycle_in_api() -> None:
    assert cycles(graph()) == []


def test_the_checks_see_imports_a_cycle_and_a_layer_breach() -> None:
    edges = graph()
    assert edges.get("api.app"), "the walk found no imports"
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
