"""Every command at 80 columns with every id, name and price whole; config.json as it is; --version; database errors."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from rich.cells import cell_len

from api.adapters.storage.reference import load_reference_catalog
from api.cli import main

CONFIGS = sorted((Path(__file__).parents[1] / "fixtures" / "hf_configs").glob("*.json"))


@pytest.fixture
def cli(seeded_sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("DATABASE_URL", seeded_sqlite_url)
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv("COLUMNS", "80")
    return CliRunner()


async def run(cli: CliRunner, arguments: list[str], exit_code: int = 0) -> str:
    result = await asyncio.to_thread(cli.invoke, main, arguments)
    assert result.exit_code == exit_code, (arguments, result.output)
    return result.output


def widest(out: str) -> int:
    return max((cell_len(line) for line in out.splitlines()), default=0)


def columns(out: str) -> list[str]:
    """The text of each column of every table, its lines joined by spaces: a name wrapped at spaces reads whole."""
    found: dict[tuple[int, int], list[str]] = {}
    table = 0
    for line in out.splitlines():
        stripped = line.strip()
        if stripped.startswith(("┏", "┌")):
            table += 1
        elif stripped.startswith("│"):
            for index, cell in enumerate(stripped.strip("│").split("│")):
                found.setdefault((table, index), []).append(cell.strip())
    return [" ".join(part for part in parts if part) for parts in found.values()]


def _commands(group: click.Group, prefix: list[str]) -> list[list[str]]:
    paths = []
    for name, command in group.commands.items():
        paths.append([*prefix, name])
        if isinstance(command, click.Group):
            paths += _commands(command, [*prefix, name])
    return paths


async def test_every_command_and_its_help_fits_80_columns(cli: CliRunner) -> None:
    commands = _commands(main, [])
    assert ["models", "list"] in commands and ["gpus"] in commands
    for command in [[], *commands]:
        out = await run(cli, [*command, "--help"])
        assert widest(out) <= 80, (command, out)


@pytest.mark.parametrize("arguments", [["gpus"], ["gpus", "--sort", "price"], ["gpus", "--vendor", "amd"]])
async def test_gpus_keeps_every_id_name_and_price_whole_at_80_columns(cli: CliRunner, arguments: list[str]) -> None:
    out = await run(cli, arguments)
    assert widest(out) <= 80 and "…" not in out, out
    text = columns(out)
    catalog = load_reference_catalog()
    shown = [gpu for gpu in catalog.gpus if "--vendor" not in arguments or gpu.vendor == "amd"]
    first = text[0].split()
    for gpu in shown:
        assert gpu.id in first, (gpu.id, out)
        assert any(gpu.name in column for column in text), (gpu.name, out)
        offer = catalog.lowest_prices(gpu.id).get("on_demand")
        if offer is not None:
            assert any(f"{offer.usd_per_gpu_hour:.2f}" in column.split() for column in text), (gpu.id, out)
    # MI350X and MI355X, cut to "mi35…" before, are told apart.
    assert ("mi350x" in first and "mi355x" in first) or "--vendor" not in arguments


async def test_models_list_names_every_model_whole_at_80_columns(cli: CliRunner) -> None:
    out = await run(cli, ["models", "list"])
    assert widest(out) <= 80 and "…" not in out, out
    text = columns(out)
    for model in load_reference_catalog().models:
        assert model.id in text[0].split(), (model.id, out)
        assert any(model.name in column for column in text), (model.name, out)
    document = json.loads(await run(cli, ["models", "list", "--kind", "diffusion", "--json"]))
    assert document["total"] == len(document["items"]) > 0
    assert {item["kind"] for item in document["items"]} == {"diffusion"}


async def test_seed_and_migrate_fit_80_columns(cli: CliRunner) -> None:
    for command in (["migrate"], ["seed"], ["openapi", "--check"]):
        out = await run(cli, command)
        assert widest(out) <= 80, (command, out)


async def test_version(cli: CliRunner) -> None:
    out = await run(cli, ["--version"])
    assert re.fullmatch(r"gpu-advisor \d+\.\d+\.\d+\S*\n", out), out


def shipped(config: Path, folder: Path) -> tuple[Path, dict[str, object]]:
    """The fixture as Hugging Face ships it: plus keys every config.json carries and no request field has."""
    document = json.loads(config.read_text()) | {
        "architectures": ["SomeForCausalLM"],
        "transformers_version": "4.57.1",
        "_name_or_path": f"example/{config.stem}",
        "initializer_range": 0.02,
    }
    path = folder / "config.json"
    path.write_text(json.dumps(document))
    return path, document


@pytest.mark.parametrize("config", CONFIGS, ids=[path.stem for path in CONFIGS])
async def test_custom_model_takes_a_config_json_as_it_is(cli: CliRunner, config: Path, tmp_path: Path) -> None:
    path, document = shipped(config, tmp_path)
    answer = json.loads(await run(cli, ["recommend", "--custom-model", str(path), "--limit", "1", "--json"]))
    assert answer["options"] or answer["excluded"], answer
    inline = json.loads(await run(cli, ["recommend", "--custom-model", json.dumps(document), "--limit", "1", "--json"]))
    assert inline["options"] == answer["options"]


async def test_an_unmigrated_database_is_one_readable_line(cli: CliRunner, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'empty.db'}")
    for command in (["seed"], ["models", "import", str(CONFIGS[0]), "--id", "some-model"]):
        out = await run(cli, command, exit_code=1)
        assert "not migrated" in out and "gpu-advisor migrate" in out, (command, out)
        assert "SQL" not in out and "Traceback" not in out and len(out.strip().splitlines()) == 1, (command, out)


async def test_an_unreachable_database_is_one_readable_line(cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.conftest import free_port

    monkeypatch.setenv("DATABASE_URL", f"postgresql+asyncpg://postgres:secret@127.0.0.1:{free_port()}/nothing")
    for command in (["seed"], ["migrate"]):
        out = await run(cli, command, exit_code=1)
        assert "cannot reach the database at 127.0.0.1" in out and "DATABASE_URL" in out, (command, out)
        assert "secret" not in out and "Traceback" not in out and len(out.strip().splitlines()) == 1, (command, out)


async def test_an_enum_option_lists_its_values(cli: CliRunner) -> None:
    out = await run(cli, ["recommend", "--model", "llama-3.1-8b", "--precision", "bf61"], exit_code=2)
    assert "--precision: 'bf61' is not one of" in out and "fp8" in out and "did you mean bf16?" in out, out
