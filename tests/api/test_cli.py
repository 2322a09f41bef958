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
    assert "Best option:" in result.output and "EP1" in result.output


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
    # DeepSeek-R1 on one 8-GPU node: experts split over the node, attention data-parallel (MLA)
    assert option["feasible"] and option["parallelism"]["expert"] == 8


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


@pytest.mark.parametrize(
    ("arguments", "unit"),
    [
        (["--kind", "inference", "--model", "llama-3.1-8b"], "tok/s"),
        (["--kind", "training", "--model", "llama-3.1-8b", "--train-tokens", "1e9"], "/run"),
        (["--kind", "fine_tuning", "--model", "llama-3.1-8b", "--method", "full", "--train-tokens", "1e10"], "days)"),
        (["--kind", "image_generation", "--model", "flux.1-dev"], "images/h"),
    ],
)
def test_every_workload_kind_prints_throughput_and_cost_with_units(
    runner: CliRunner, arguments: list[str], unit: str
) -> None:
    result = runner.invoke(main, ["recommend", *arguments, "--limit", "3"])
    assert result.exit_code == 0, result.output
    assert unit in result.stdout and "$" in result.stdout and "Excluded GPUs" in result.stdout


def test_estimate_prints_a_table_with_reasons(runner: CliRunner) -> None:
    result = runner.invoke(main, ["estimate", "--gpu", "h200", "--count", "8", "--model", "deepseek-r1"])
    assert result.exit_code == 0, result.output
    assert "8x NVIDIA H200" in result.stdout and "Reasons" in result.stdout and "expert parallel" in result.stdout
