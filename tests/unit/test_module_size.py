"""No Python module over 400 lines: a module that grows past it is split by what its parts hold."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 400
# Folders whose modules are held to the limit (generated files and data are not Python modules here).
FOLDERS = ("domain", "api", "bench")


def too_long(folders: tuple[str, ...], limit: int) -> list[str]:
    found = []
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > limit:
                found.append(f"{path.relative_to(ROOT)}: {lines} lines")
    return found


def test_no_module_over_the_limit() -> None:
    assert too_long(FOLDERS, MAX_LINES) == []


def test_the_check_sees_a_long_module() -> None:
    # The longest domain module is over a limit just below its length.
    longest = max(len(path.read_text(encoding="utf-8").splitlines()) for path in (ROOT / "domain").rglob("*.py"))
    assert too_long(("domain",), longest - 1) != []
