"""domain/ is pure logic: no framework, database, cache or service imports."""

from __future__ import annotations

import ast
from pathlib import Path

import domain

FORBIDDEN = {"litestar", "sqlalchemy", "redis", "alembic", "asyncpg", "aiosqlite", "api", "uvicorn", "httpx"}


def test_domain_imports_nothing_from_the_service_layer() -> None:
    offenders = []
    for path in Path(domain.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {name}" for name in names if name.split(".")[0] in FORBIDDEN]
    assert offenders == []
