"""The gpu-advisor command: tables for people, the API's JSON for scripts."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from api.cli import main


@pytest.fixture
def runner(seeded_sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("DATABASE_URL", seeded_sqlite_url)
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv("COLUMNS", "200")
    return CliRunner()


def test_recommend_prints_a_ranked_table(runner: CliRunner) -> None:
    result = runner.invoke(
        main, ["recommend", "--model", "llama-3.1-70b", "--kind", "inference", "--concurrency", "32"]
    )
    assert result.exit_code == 0, result.output
    assert "Best option:" in result.output and "TPxPPxDP" in result.output


def test_recommend_json_is_the_api_document(runner: CliRunner) -> None:
    result = runner.invoke(main, ["recommend", "--model", "sdxl", "--kind", "image_generation", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert document["id"].startswith("rec_") and document["options"][0]["performance"]["images_per_hour"]


def test_recommend_in_chinese(runner: CliRunner) -> None:
    result = runner.invoke(
        main, ["recommend", "--kind", "fine_tuning", "--model", "llama-3.1-8b", "--method", "lora", "--lang", "zh"]
    )
    assert result.exit_code == 0, result.output
    assert "首选" in result.output and "卡数" in result.output


def test_estimate(runner: CliRunner) -> None:
    result = runner.invoke(main, ["estimate", "--gpu", "h200", "--count", "8", "--model", "deepseek-r1", "--json"])
    assert result.exit_code == 0, result.output
    option = json.loads(result.output)
    assert option["feasible"] and option["parallelism"]["tensor"] == 8


@pytest.mark.parametrize(
    "arguments",
    [
        ["recommend", "--model", "no-such-model"],
        ["recommend", "--model", "llama-3.1-8b", "--concurrency", "0"],
        ["recommend", "--kind", "training", "--model", "llama-3.1-8b", "--concurrency", "4"],
        ["estimate", "--gpu", "h900", "--count", "1", "--model", "llama-3.1-8b"],
    ],
)
def test_bad_arguments_are_usage_errors(runner: CliRunner, arguments: list[str]) -> None:
    result = runner.invoke(main, arguments)
    assert result.exit_code == 2 and "Error" in result.output
