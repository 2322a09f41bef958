"""The import contract: domain/ imports no service code, packages import only the ones below them, no cycles.

Every import counts, those under TYPE_CHECKING and those inside functions too: a deferred import is still a
dependency, and a cycle hidden behind one is still a cycle.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("domain", "api")

# Layers, lowest first: a module of one package may import its own package and those listed before it, never one
# listed after it. Packages not listed are not constrained by the table (the cycle check still covers them).
LAYERS: dict[str, tuple[str, ...]] = {
    "domain": (
        "domain.data",
        "domain.catalog",
        "domain.workloads",
        "domain.hardware",
        "domain.performance",
        "domain.calibration",
        "domain.narrative",
        "domain.pricing",
        "domain.planning",
    ),
}
# Imports no layer order forbids but that are still not allowed: (importer prefix, imported prefix, why).
FORBIDDEN: tuple[tuple[str, str, str], ...] = (
    ("domain.planning", "domain.calibration.harness", "the planner reads the ledger, never the harness"),
    ("domain.planning", "domain.calibration.points", "the planner reads the ledger, never the calibration points"),
)
# What domain/ may import besides itself: the standard library and msgspec; nothing of the service or its libraries.
DOMAIN_THIRD_PARTY = {"msgspec"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for top in SCANNED for path in sorted((ROOT / top).rglob("*.py"))}


def imported(name: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """Every module `name` imports, anywhere in the file: top level, TYPE_CHECKING blocks, functions."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                # `from package import module` depends on the module; `from module import name` on the module.
                full = f"{base}.{alias.name}"
                yield full if full in known else base


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: set(imported(name, path, known)) for name, path in known.items()}


def within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def layer_violations(edges: dict[str, set[str]]) -> list[str]:
    found = []
    for order in LAYERS.values():
        rank = {package: index for index, package in enumerate(order)}

        def rank_of(name: str, rank: dict[str, int] = rank) -> int | None:
            matches = [package for package in rank if within(name, package)]
            return rank[max(matches, key=len)] if matches else None

        for source, targets in edges.items():
            mine = rank_of(source)
            if mine is None:
                continue
            for target in targets:
                theirs = rank_of(target)
                if theirs is not None and theirs > mine:
                    found.append(f"{source} imports {target}: {order[theirs]} is above {order[mine]}")
    return sorted(found)


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (or a module importing itself), by Tarjan."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, ()):
            if target not in edges:
                continue
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in edges.get(node, ()):
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(found)


def test_domain_imports_only_itself_the_standard_library_and_msgspec() -> None:
    edges = graph()
    allowed = set(sys.stdlib_module_names) | DOMAIN_THIRD_PARTY | {"domain", "__future__"}
    offenders = sorted(
        f"{source} imports {target}"
        for source, targets in edges.items()
        if within(source, "domain")
        for target in targets
        if target.split(".")[0] not in allowed
    )
    assert offenders == []


def test_packages_import_only_packages_below_them() -> None:
    assert layer_violations(graph()) == []


def test_nothing_imports_what_is_forbidden_to_it() -> None:
    edges = graph()
    offenders = sorted(
        f"{source} imports {target}: {why}"
        for importer, imported_prefix, why in FORBIDDEN
        for source, targets in edges.items()
        if within(source, importer)
        for target in targets
        if within(target, imported_prefix)
    )
    assert offenders == []


def test_no_import_cycles_in_domain_or_api() -> None:
    assert cycles(graph()) == []


def test_every_domain_package_has_a_layer() -> None:
    listed = {package for order in LAYERS.values() for package in order}
    packages = {module_name(path.parent) for path in (ROOT / "domain").glob("*/__init__.py")}
    assert packages - listed == set()
    # Only packages below domain/: no loose modules beside them.
    assert sorted(path.name for path in (ROOT / "domain").glob("*.py")) == ["__init__.py"]


def test_the_checks_catch_what_they_are_for() -> None:
    """A layer breach, a forbidden import and a cycle, on a made-up graph."""
    edges = {
        "domain.catalog.records": {"domain.planning.plan"},
        "domain.planning.plan": {"domain.catalog.records"},
        "domain.planning.options": {"domain.calibration.harness"},
        "domain.calibration.harness": set(),
    }
    assert layer_violations(edges) == [
        "domain.catalog.records imports domain.planning.plan: domain.planning is above domain.catalog"
    ]
    assert cycles(edges) == [["domain.catalog.records", "domain.planning.plan"]]
    assert within("domain.planning.options", FORBIDDEN[0][0]) and within("domain.calibration.harness", FORBIDDEN[0][1])
