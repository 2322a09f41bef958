"""`gpu-advisor models import config.json --id ...`: the model is in the catalog afterwards, with its history."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from click.testing import CliRunner

from api.adapters.storage.bootstrap import migrate_and_seed
from api.adapters.storage.catalog_repository import load_catalog
from api.adapters.storage.database import create_engine, create_session_factory
from api.adapters.storage.model_repository import model_history
from api.cli import main
from tests.conftest import sqlite_url

CONFIGS = Path(__file__).parent.parent / "fixtures" / "hf_configs"


@pytest.fixture
def database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = sqlite_url(tmp_path)
    asyncio.run(migrate_and_seed(url))
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.delenv("REDIS_URL", raising=False)
    return url


async def stored(url: str) -> tuple[set[str], list[str]]:
    engine = create_engine(url)
    try:
        async with create_session_factory(engine)() as session:
            catalog = await load_catalog(session)
            rows, _ = await model_history(session, "my-gemma", 10)
            return {m.id for m in catalog.models} if catalog else set(), [row.actor for row in rows]
    finally:
        await engine.dispose()


def test_import_adds_the_model_with_history(database: str) -> None:
    file = CONFIGS / "gemma-3-27b.json"
    result = CliRunner().invoke(main, ["models", "import", str(file), "--id", "my-gemma", "--alias", "acme/gemma"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("created my-gemma: 27")
    ids, actors = asyncio.run(stored(database))
    assert "my-gemma" in ids and actors == ["import:gemma-3-27b.json"]


def test_a_broken_config_imports_nothing(database: str, tmp_path: Path) -> None:
    broken = tmp_path / "config.json"
    broken.write_text('{"model_type": "bert", "hidden_size": 768}')
    result = CliRunner().invoke(main, ["models", "import", str(broken), "--id", "my-gemma"])
    assert result.exit_code != 0 and "model_type" in result.output
    ids, actors = asyncio.run(stored(database))
    assert "my-gemma" not in ids and actors == []


def test_a_bad_id_imports_nothing(database: str) -> None:
    result = CliRunner().invoke(main, ["models", "import", str(CONFIGS / "mistral-7b.json"), "--id", "Not An Id"])
    assert result.exit_code != 0 and "nothing was imported" in result.output
