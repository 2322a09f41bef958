"""`gpu-advisor prices export` and `prices import`: the same CSV format, all or nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from api.adapters.storage.bootstrap import migrate_and_seed
from api.cli import main
from tests.conftest import sqlite_url


@pytest.fixture
async def database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = sqlite_url(tmp_path)
    await migrate_and_seed(url)
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.delenv("REDIS_URL", raising=False)
    return url


def test_export_then_import_round_trips_unchanged(database: str, tmp_path: Path) -> None:
    runner = CliRunner()
    exported = runner.invoke(main, ["prices", "export"])
    assert exported.exit_code == 0 and exported.output.startswith("id,provider,gpu,")
    file = tmp_path / "offers.csv"
    file.write_text(exported.output, encoding="utf-8")
    imported = runner.invoke(main, ["prices", "import", str(file)])
    assert imported.exit_code == 0, imported.output
    assert "created 0, updated 0" in imported.output and "catalog unchanged" in imported.output


def test_import_changes_a_price_and_rejects_bad_files(database: str, tmp_path: Path) -> None:
    runner = CliRunner()
    lines = runner.invoke(main, ["prices", "export"]).output.splitlines()
    header, first = lines[0], lines[1]
    columns = header.split(",")
    values = first.split(",")
    values[columns.index("usd_per_gpu_hour")] = "0.42"
    good = tmp_path / "good.csv"
    good.write_text(f"{header}\n{','.join(values)}\n", encoding="utf-8")
    result = runner.invoke(main, ["prices", "import", str(good)])
    assert result.exit_code == 0 and "updated 1" in result.output
    assert ",0.42," in runner.invoke(main, ["prices", "export"]).output

    values[columns.index("gpu")] = "h900"
    bad = tmp_path / "bad.csv"
    bad.write_text(f"{header}\n{','.join(values)}\n", encoding="utf-8")
    rejected = runner.invoke(main, ["prices", "import", str(bad)])
    assert rejected.exit_code == 1 and "bad.csv:2: gpu" in rejected.output


def test_import_shows_progress_on_stderr_and_keeps_stdout_clean(database: str, tmp_path: Path) -> None:
    runner = CliRunner()
    exported = runner.invoke(main, ["prices", "export"]).stdout
    rows = len(exported.splitlines()) - 1
    file = tmp_path / "offers.csv"
    file.write_text(exported, encoding="utf-8")

    as_json = runner.invoke(main, ["prices", "import", str(file), "--json"])
    assert as_json.exit_code == 0, as_json.output
    document = json.loads(as_json.stdout)
    assert document["created"] == document["updated"] == [] and len(document["unchanged"]) == rows
    assert document["catalog_version"]
    for stage in ("read offers.csv", "validated rows", "wrote offers"):
        assert stage in as_json.stderr
    assert f"{rows}/{rows}" in as_json.stderr

    as_text = runner.invoke(main, ["prices", "import", str(file)])
    assert as_text.stdout.splitlines() == [f"created 0, updated 0, unchanged {rows}; catalog unchanged"]
    assert "validated rows" in as_text.stderr


def test_rejected_import_names_the_rows_on_stderr_only(database: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"offers": [{"id": "x", "provider": "nobody"}]}', encoding="utf-8")
    result = CliRunner().invoke(main, ["prices", "import", str(bad), "--json"])
    assert result.exit_code == 1 and result.stdout == ""
    assert "bad.json:1:" in result.stderr and "nothing was imported" in result.stderr


def test_listing_and_the_subcommands_share_the_group(database: str) -> None:
    runner = CliRunner()
    listing = runner.invoke(main, ["prices", "--pricing", "reserved_1y", "--json"])
    assert listing.exit_code == 0 and {o["pricing"] for o in json.loads(listing.stdout)["items"]} == {"reserved_1y"}
    assert runner.invoke(main, ["prices", "export"]).stdout.startswith("id,provider,gpu,")
    mixed = runner.invoke(main, ["prices", "--gpu", "h100", "export"])
    assert mixed.exit_code == 2 and "--gpu" in mixed.stderr
