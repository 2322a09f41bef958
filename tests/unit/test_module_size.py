"""Modules stay small enough to read: no Python module over 400 lines in the folders listed here."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 400
# The folders held to the limit.
ROOTS = ("api",)


def long_modules(roots: tuple[str, ...], limit: int = MAX_LINES) -> dict[str, int]:
    """Every .py module over the limit under the given folders, with its line count."""
    found: dict[str, int] = {}
    for root in roots:
        for path in sorted((ROOT / root).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > limit:
                found[str(path.relative_to(ROOT))] = lines
    return found


def test_no_module_is_over_the_limit() -> None:
    assert long_modules(ROOTS) == {}


def test_the_check_sees_a_long_module(tmp_path: Path) -> None:
    assert long_modules(("api",), limit=10), "the walk found nothing to measure"
