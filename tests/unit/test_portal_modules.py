"""The portal's pure JavaScript modules (formatting, table building, labels) under `node --test` (tests/ui/)."""

from __future__ import annotations

import json
import os
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
