"""The README's layout block matches the tree: it names every package of domain/ and api/ (and each top-level module
of api/), and everything it names exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The folders whose packages the block must name, and whose top-level modules it must name.
PACKAGES_OF = ("domain", "api")
MODULES_OF = ("api",)
# A folder (`name/`, `a/b/`) or a module (`name.py`): not part of a URL, a sentence's "and/or" or a longer path.
NAME = re.compile(r"(?<![\w/.])((?:[a-z_][a-z0-9_]*/)+(?![\w])|[a-z_][a-z0-9_]*\.py\b)")
ENTRY = re.compile(r"^( *)(\S.*?)(?:\s{2,}(.*))?$")


def layout_block(readme: str) -> list[str]:
    """The lines of the fenced block under '## Architecture'."""
    section = readme.split("\n## Architecture\n", 1)[1]
    return section.split("```", 2)[1].strip("\n").splitlines()


def named_paths(lines: list[str]) -> set[str]:
    """Every path the block names, resolved: an entry against the folder it is indented under, names in an entry's
    description against that entry's folder (or, for a module entry, its parent), multi-part paths from the root."""
    found: set[str] = set()
    parents: list[tuple[int, str]] = []  # (indent, folder) of the open entries
    for line in lines:
        match = ENTRY.match(line)
        if not match or not line.strip():
            continue
        indent, head, description = len(match.group(1)), match.group(2), match.group(3) or ""
        if not description and "  " not in line.strip() and not head.rstrip(",").endswith(("/", ".py")):
            # a description continued from the line above
            description, head = head, ""
        while parents and parents[-1][0] >= indent and head:
            parents.pop()
        base = parents[-1][1] if parents else ""
        heads = [name for name in NAME.findall(head)]
        folder = base
        for name in heads:
            path = resolve(base, name)
            found.add(path)
            if name.endswith("/") and len(heads) == 1:
                folder = path
        if heads:
            parents.append((indent, folder))
        context = folder if heads else (parents[-1][1] if parents else "")
        for name in NAME.findall(description):
            found.add(resolve(context, name))
    return found


def resolve(base: str, name: str) -> str:
    name = name.rstrip("/")
    if "/" in name and (ROOT / name.split("/", 1)[0]).is_dir():
        return name
    return f"{base}/{name}" if base else name


def tree_paths() -> set[str]:
    """Every package under domain/ and api/ (a folder holding .py or .js files), and api/'s top-level modules."""
    wanted: set[str] = set()
    for top in PACKAGES_OF:
        for folder in [ROOT / top, *(ROOT / top).rglob("*")]:
            if (
                folder.is_dir()
                and "__pycache__" not in folder.parts
                and any(folder.glob("*.py")) | any(folder.glob("*.js"))
            ):
                wanted.add(str(folder.relative_to(ROOT)))
    for top in MODULES_OF:
        wanted |= {f"{top}/{path.name}" for path in (ROOT / top).glob("*.py") if path.name != "__init__.py"}
    return wanted


def block_paths() -> set[str]:
    return named_paths(layout_block((ROOT / "README.md").read_text(encoding="utf-8")))


def test_the_block_names_every_package_and_top_level_module() -> None:
    assert sorted(tree_paths() - block_paths()) == []


def test_everything_the_block_names_exists() -> None:
    assert sorted(path for path in block_paths() if not (ROOT / path).exists()) == []


def test_the_reading_of_the_block() -> None:
    lines = [
        "api/      the service",
        "  app.py, settings.py   the factory",
        "  routes/       catalog.py (GPUs), prices.py; see domain/data/",
        "  adapters/     Redis, storage/ (tables)",
        "                and the gpuhunt.py feed, an and/or choice",
    ]
    assert named_paths(lines) == {
        "api",
        "api/app.py",
        "api/settings.py",
        "api/routes",
        "api/routes/catalog.py",
        "api/routes/prices.py",
        "domain/data",
        "api/adapters",
        "api/adapters/storage",
        "api/adapters/gpuhunt.py",
    }
