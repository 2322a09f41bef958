"""The portal's pure JavaScript modules (formatting, table building, labels) under `node --test` (tests/ui/)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TESTS = sorted((ROOT / "tests" / "ui").glob("*.test.mjs"))


def test_the_pure_modules_pass_their_node_tests(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        message = "node is not installed (Debian's nodejs package provides it)"
        if os.environ.get("GPU_ADVISOR_REQUIRE_SERVICES") == "1":
            pytest.fail(message + " and GPU_ADVISOR_REQUIRE_SERVICES=1", pytrace=False)
        pytest.skip(message)
    assert TESTS, "no tests/ui/*.test.mjs"
    # The page's .js files are ES modules; a package.json saying so lets any Node release load them as such.
    for folder in ("api/ui", "tests/ui"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    (tmp_path / "package.json").write_text(json.dumps({"type": "module"}), encoding="utf-8")
    run = subprocess.run(
        [node, "--test", *(str(tmp_path / "tests" / "ui" / test.name) for test in TESTS)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]


UI = ROOT / "api" / "ui"
IMPORT = re.compile(r'^import\s[^;]*?from\s+"\./([\w.-]+)";', re.M | re.S)
# Modules node runs: they may import only each other and the label tables, never the DOM or the page's state.
PURE = {"format.js", "options.js", "i18n.js"}


def portal_imports() -> dict[str, set[str]]:
    return {path.name: set(IMPORT.findall(path.read_text(encoding="utf-8"))) for path in UI.glob("*.js")}


def test_the_pure_modules_import_only_pure_ones() -> None:
    imports = portal_imports()
    assert {name: sorted(imports[name] - PURE) for name in PURE} == {name: [] for name in PURE}


def test_no_import_cycle_among_the_portal_modules() -> None:
    imports = portal_imports()
    assert imports["app.js"], "the walk found no imports"
    state: dict[str, str] = {}

    def visit(name: str, trail: tuple[str, ...]) -> None:
        state[name] = "open"
        for target in sorted(imports.get(name, ())):
            assert state.get(target) != "open", " -> ".join((*trail, name, target))
            if target not in state:
                visit(target, (*trail, name))
        state[name] = "done"

    for name in sorted(imports):
        if name not in state:
            visit(name, ())
