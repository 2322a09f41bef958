"""README command 1 works on a distribution's python3 (PEP 668) and serves without the development tools."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DEVELOPMENT_TOOLS = ("pytest", "playwright", "kubernetes-validate", "schemathesis", "ruff", "mypy")


def command(number: int) -> str:
    block = re.search(r"```sh\n(.*?)```", (REPO / "README.md").read_text(), re.DOTALL)
    assert block is not None
    lines = [line for line in block.group(1).splitlines() if line.startswith("python3 ")]
    return lines[number - 1]


def test_command_1_installs_nothing_into_the_system_python() -> None:
    first = command(1)
    # A distribution's python3 refuses both (externally-managed-environment).
    assert "pip install --user" not in first and "--break-system-packages" not in first
    assert first.startswith("python3 -m venv ") and first.endswith("uv run --no-dev gpu-advisor serve")
    assert "pip install --user" not in command(2)


def test_ci_runs_command_1_on_an_externally_managed_python() -> None:
    run = "\n".join(
        line for line in (REPO / ".ci" / "run").read_text().splitlines() if not line.lstrip().startswith("#")
    )
    assert ".ci/stock-python" in run and not re.search(r"pip install[^\n]*--user", run)
    assert "EXTERNALLY-MANAGED" in (REPO / ".ci" / "stock-python").read_text()


def test_the_service_without_the_development_group_holds_no_development_tool() -> None:
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not installed")
    locked = subprocess.run(
        [uv, "export", "--frozen", "--no-dev", "--no-hashes", "--no-emit-project"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    names = {re.split(r"[=<>;\[ ]", line, maxsplit=1)[0].lower() for line in locked.splitlines() if line[:1].isalnum()}
    assert "litestar" in names and "uvicorn" in names
    assert not names & set(DEVELOPMENT_TOOLS), sorted(names & set(DEVELOPMENT_TOOLS))
    assert "--no-dev" in (REPO / "Dockerfile").read_text()
