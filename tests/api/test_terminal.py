"""The terminal answers: tables, the HTTP API's exact JSON with --json, Chinese with --lang zh, one-line errors.

JSON answers are compared with what the in-process app answers for the same question on the same database. The
command runs in a thread of its own because it runs its own event loop, as it does in a terminal.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from litestar import Litestar
from litestar.testing import AsyncTestClient

from api.adapters.storage.bootstrap import migrate_and_seed
from api.cli import main
from api.cli.tables import shorten
from domain.narrative.explain import money
from tests.conftest import sqlite_url

Client = AsyncTestClient[Litestar]
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def cli(seeded_sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("DATABASE_URL", seeded_sqlite_url)
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv("COLUMNS", "220")
    return CliRunner()


async def run(cli: CliRunner, *arguments: str) -> Result:
    result = await asyncio.to_thread(cli.invoke, main, list(arguments))
    assert result.exit_code == 0, result.output
    return result


async def run_json(cli: CliRunner, *arguments: str) -> Any:
    """The document printed with --json: stdout holds it and nothing else."""
    result = await run(cli, *arguments, "--json")
    return json.loads(result.stdout)


def without_time(document: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in document.items() if key != "created_at"}


# recommend

RECOMMENDATIONS = [
    (
        ["--kind", "inference", "--model", "llama-3.1-70b", "--concurrency", "32", "--max-ttft-ms", "2000"],
        {"kind": "inference", "model": "llama-3.1-70b", "concurrency": 32, "max_ttft_ms": 2000},
        {},
    ),
    (
        ["--kind", "training", "--model", "llama-3.1-8b", "--train-tokens", "1e10", "--target-days", "10"],
        {"kind": "training", "model": "llama-3.1-8b", "train_tokens": 1e10, "target_days": 10},
        {},
    ),
    (
        ["--kind", "fine_tuning", "--model", "llama-3.1-8b", "--method", "qlora", "--optimizer", "adamw_8bit"],
        {"kind": "fine_tuning", "model": "llama-3.1-8b", "method": "qlora", "optimizer": "adamw_8bit"},
        {},
    ),
    (
        ["--kind", "image_generation", "--model", "sdxl", "--images-per-hour", "5000", "--vendors", "nvidia,amd"],
        {"kind": "image_generation", "model": "sdxl", "images_per_hour": 5000},
        {"vendors": ["nvidia", "amd"]},
    ),
]


@pytest.mark.parametrize(("arguments", "workload", "constraints"), RECOMMENDATIONS)
async def test_recommend_json_is_what_the_api_answers(
    cli: CliRunner, client: Client, arguments: list[str], workload: dict[str, Any], constraints: dict[str, Any]
) -> None:
    response = await client.post("/v1/recommendations", json={"workload": workload, "constraints": constraints})
    assert response.status_code == 200, response.text
    document = await run_json(cli, "recommend", *arguments)
    assert without_time(document) == without_time(response.json())


async def test_recommend_table_has_every_part(cli: CliRunner, client: Client) -> None:
    body = {"workload": {"kind": "inference", "model": "llama-3.1-70b", "concurrency": 32}}
    answer = (await client.post("/v1/recommendations", json=body)).json()
    result = await run(cli, "recommend", "--model", "llama-3.1-70b", "--concurrency", "32")
    out = result.stdout
    for header in ("GPU", "layout", "memory used", "throughput", "per hour", "per unit of work", "targets"):
        assert header in out
    for section in ("Options: llama-3.1-70b", "Warnings", "Excluded GPUs", "Summary", "Assumptions (#1"):
        assert section in out
    best = answer["options"][0]
    assert best["gpu"]["id"] in out and best["gpu"]["name"] in out
    assert money(best["cost"]["hourly"], "USD") in out and money(best["cost"]["per_million_tokens"], "USD") in out
    assert f"{best['performance']['tokens_per_second']['expected']:,.0f} tok/s" in out
    assert best["offer"]["provider"] in out and "on demand" in out
    excluded = answer["excluded"][0]
    # A long reason wraps inside its table cell: every word of it is there.
    assert excluded["gpu"] in out and all(word in out for word in excluded["reason"].split())
    assert " ".join(answer["summary"].split()) in " ".join(out.split())
    assert result.stderr == ""


async def test_recommend_in_chinese(cli: CliRunner) -> None:
    out = (await run(cli, "recommend", "--model", "qwen2.5-72b", "--lang", "zh", "--currency", "CNY")).stdout
    for header in ("卡数", "显存占用", "吞吐", "每小时", "单位成本", "供应商 / 计价", "排除的 GPU", "总结", "假设"):
        assert header in out
    assert "首选" in out and "按需" in out and "¥" in out
    summary = out.split("总结", 1)[1]
    assert CJK.search(summary)


async def test_recommend_constraints_reach_the_request(cli: CliRunner) -> None:
    document = await run_json(
        cli,
        "recommend",
        "--model",
        "llama-3.1-8b",
        "--gpus",
        "H100,h200",
        "--pricing",
        "on_demand,spot",
        "--single-node",
        "--allow-unpriced",
        "--max-usd-per-hour",
        "100",
        "--limit",
        "2",
    )
    constraints = document["constraints"]
    assert constraints["gpus"] == ["h100-sxm", "h200"] and constraints["pricing"] == ["on_demand", "spot"]
    assert constraints["single_node"] is True and constraints["require_offer"] is False
    assert {option["gpu"]["id"] for option in document["options"]} <= {"h100-sxm", "h200"}


async def test_custom_model_from_a_file(cli: CliRunner, tmp_path: Path) -> None:
    config = tmp_path / "model.json"
    config.write_text(
        json.dumps(
            {
                "name": "in-house 8B",
                "params_b": 8,
                "layers": 32,
                "hidden_size": 4096,
                "attention_heads": 32,
                "kv_heads": 8,
            }
        ),
        encoding="utf-8",
    )
    document = await run_json(cli, "recommend", "--custom-model", str(config), "--limit", "1")
    assert document["workload"]["custom_model"]["name"] == "in-house 8B" and document["options"]


# estimate


async def test_estimate_json_is_what_the_api_answers(cli: CliRunner, client: Client) -> None:
    body = {
        "workload": {"kind": "inference", "model": "deepseek-r1", "concurrency": 64},
        "gpu": "h200",
        "gpu_count": 8,
        "provider": "coreweave",
        "pricing": "on_demand",
    }
    response = await client.post("/v1/estimates", json=body)
    assert response.status_code == 200, response.text
    document = await run_json(
        cli,
        "estimate",
        "--gpu",
        "h200",
        "--count",
        "8",
        "--model",
        "deepseek-r1",
        "--concurrency",
        "64",
        "--provider",
        "coreweave",
        "--pricing",
        "on_demand",
    )
    assert document == response.json()


async def test_estimate_that_does_not_fit_says_why(cli: CliRunner) -> None:
    out = (await run(cli, "estimate", "--gpu", "h100", "--count", "1", "--model", "llama-2-70b")).stdout
    assert "infeasible" in out and "Reasons" in out and "Does not fit" in out and "GB short" in out


async def test_estimate_in_chinese(cli: CliRunner) -> None:
    out = (await run(cli, "estimate", "--gpu", "h200", "--count", "8", "--model", "deepseek-r1", "--lang", "zh")).stdout
    assert "理由" in out and "卡数" in out and "专家并行" in out


# compare


async def test_compare_json_is_what_the_api_answers(cli: CliRunner, client: Client) -> None:
    response = await client.get("/v1/gpus/compare", params={"ids": "h100,h200,mi300x", "lang": "zh"})
    assert response.status_code == 200, response.text
    document = await run_json(cli, "compare", "h100", "h200", "mi300x", "--lang", "zh")
    assert document == response.json()
    # Comma-separated names as the API takes them, and names of the same GPU merged.
    assert await run_json(cli, "compare", "h100,h200,mi300x", "H100 SXM5", "--lang", "zh") == response.json()


async def test_compare_table(cli: CliRunner, client: Client) -> None:
    answer = (await client.get("/v1/gpus/compare", params={"ids": "h100-sxm,h200", "lang": "en"})).json()
    out = (await run(cli, "compare", "h100-sxm", "h200")).stdout
    assert "Specifications" in out and "Ratios to h100-sxm" in out and "Summary" in out
    assert "NVIDIA H100 SXM5 80GB" in out and "141 GB HBM3e" in out and "3,350" in out
    h200 = answer["ratios"][1]
    assert f"{h200['memory_gb']:.2f}x" in out and f"{h200['memory_bandwidth_gbps']:.2f}x" in out
    assert answer["summary"].split(":")[0] in out


async def test_compare_in_chinese(cli: CliRunner) -> None:
    out = (await run(cli, "compare", "h100", "mi300x", "--lang", "zh")).stdout
    assert "规格" in out and "显存" in out and "以 NVIDIA H100 SXM5 80GB 为基准" in out


# prices


async def test_prices_json_is_what_the_api_answers(cli: CliRunner, client: Client) -> None:
    query = {"gpu": "H100", "max_usd_per_gpu_hour": "5", "sort": "as_of", "limit": "200"}
    response = await client.get("/v1/offers", params=query)
    assert response.status_code == 200, response.text
    document = await run_json(cli, "prices", "--gpu", "H100", "--max-usd-per-gpu-hour", "5", "--sort", "age")
    assert document == response.json() and document["items"]
    everything = (await client.get("/v1/offers", params={"limit": "200"})).json()
    assert await run_json(cli, "prices") == everything


async def test_prices_table(cli: CliRunner, client: Client) -> None:
    offers = (await client.get("/v1/offers", params={"provider": "digitalocean", "pricing": "on_demand"})).json()
    result = await run(cli, "prices", "--provider", "digitalocean", "--pricing", "on_demand")
    out = result.stdout
    for header in ("provider", "GPUs / instance", "pricing", "USD / GPU-h", "USD / instance-h", "as of", "age (days)"):
        assert header in out
    assert f"Offers 1-{offers['total']} of {offers['total']}" in out
    for offer in offers["items"]:
        assert offer["gpu"] in out and f"{offer['usd_per_gpu_hour']:,.2f}" in out
    assert "35.28" in out  # the 8-GPU H100 node per instance-hour
    lines = [line for line in out.splitlines() if "digitalocean" in line]
    prices = [float(line.split("│")[5]) for line in lines]
    assert prices == sorted(prices)


async def test_prices_in_chinese_and_paged(cli: CliRunner) -> None:
    out = (await run(cli, "prices", "--lang", "zh", "--limit", "3")).stdout
    assert "供应商" in out and "美元 / GPU 小时" in out and "按需" in out
    assert "还有" in out and "--offset 3" in out


# tco

TCO_ARGUMENTS = [
    "tco",
    "--gpu",
    "h100-sxm",
    "--count",
    "8",
    "--years",
    "3",
    "--utilization",
    "0.6",
    "--electricity",
    "0.12",
    "--pue",
    "1.3",
    "--pricing",
    "on_demand,reserved_1y,spot",
]
TCO_BODY = {
    "gpu": "h100-sxm",
    "gpu_count": 8,
    "years": 3,
    "utilization": 0.6,
    "electricity_usd_per_kwh": 0.12,
    "pue": 1.3,
    "pricing": ["on_demand", "reserved_1y", "spot"],
}


async def test_tco_json_is_what_the_api_answers(cli: CliRunner, client: Client) -> None:
    response = await client.post("/v1/tco", json=TCO_BODY)
    assert response.status_code == 200, response.text
    assert await run_json(cli, *TCO_ARGUMENTS) == response.json()
    cny = await client.post("/v1/tco", json={"system": "dgx-h100", "purchase_usd": 300000, "currency": "CNY"})
    assert await run_json(cli, "tco", "--system", "dgx-h100", "--purchase-usd", "300000", "--currency", "CNY") == (
        cny.json()
    )


async def test_tco_table(cli: CliRunner, client: Client) -> None:
    answer = (await client.post("/v1/tco", json=TCO_BODY)).json()
    out = (await run(cli, *TCO_ARGUMENTS)).stdout
    assert "8x NVIDIA H100 SXM5 80GB" in out and "3 years at 60% utilization" in out
    for section in ("Buying", "Renting (cheapest first)", "Verdict", "Summary", "Assumptions"):
        assert section in out
    for header in ("capex", "financing", "power", "facility (PUE)", "operations", "resale", "per GPU-hour used"):
        assert header in out
    assert money(answer["buy"]["total"], "USD") in out and money(answer["buy"]["purchase"], "USD") in out
    for option in answer["rent"]:
        assert option["provider"] in out and money(option["total"], "USD") in out
    for missing in answer["not_available"]:
        assert missing["reason"] in out
    assert "break-even utilization" in out and "break-even month" in out
    assert ("rent (" if answer["cheaper"] == "rent" else "buy (") in out
    assert "0.12 USD/kWh" in out and "electricity (USD per kWh)" in out


async def test_tco_in_chinese(cli: CliRunner) -> None:
    out = (await run(cli, "tco", "--gpu", "h100-sxm", "--lang", "zh")).stdout
    for header in (
        "自购",
        "租用（由低到高）",
        "购置",
        "电费",
        "残值",
        "合计",
        "结论",
        "盈亏平衡利用率",
        "总结",
        "假设",
    ):
        assert header in out
    assert "更划算" in out


# errors: one line on stderr naming the option and the closest ids, exit code 2, nothing on stdout

ERRORS = [
    (["compare", "h100", "h900"], ["h900", "did you mean", "h100-sxm"]),
    (["compare", "h100"], ["2 to 8 GPUs"]),
    (["prices", "--gpu", "h900"], ["--gpu", "h900", "h100-sxm"]),
    (["prices", "--provider", "lamda"], ["--provider", "lamda", "lambda"]),
    (["prices", "--pricing", "monthly"], ["--pricing", "monthly", "on_demand"]),
    (["prices", "--max-usd-per-gpu-hour", "-1"], ["--max-usd-per-gpu-hour"]),
    (["prices", "--gpu", "h100", "export"], ["--gpu", "export"]),
    (["tco", "--gpu", "h100x"], ["--gpu", "h100x", "h100-sxm"]),
    (["tco", "--gpu", "h100", "--system", "dgx-h100"], ["--gpu", "--system"]),
    (["tco", "--gpu", "h100", "--utilization", "1.5"], ["--utilization", "<= 1"]),
    (["tco", "--gpu", "h100", "--years", "abc"], ["--years", "abc"]),
    (["tco", "--gpu", "h100", "--pricing", "spot,monthy"], ["--pricing", "monthy", "did you mean"]),
    (["tco", "--gpu", "l40s"], ["--purchase-usd", "NVIDIA L40S"]),
    (["tco", "--system", "dgx-h900"], ["--system", "dgx-h100"]),
    (["recommend", "--model", "llama-3.1-7b"], ["--model", "llama-3.1-7b", "llama-3.1-8b"]),
    (["recommend", "--model", "llama-3.1-8b", "--concurrency", "0"], ["--concurrency", ">= 1"]),
    (["recommend", "--kind", "trainin"], ["--kind", "did you mean training"]),
    (["recommend", "--model", "llama-3.1-8b", "--gpus", "h900"], ["--gpus", "h100-sxm"]),
    (["recommend", "--model", "llama-3.1-8b", "--lang", "fr"], ["--lang", "en, zh"]),
    (["recommend", "--kind", "image_generation", "--width", "1001"], ["--width", "multiple of 8"]),
    (["recommend", "--kind", "training", "--model", "llama-3.1-8b", "--concurrency", "4"], ["--concurrency"]),
    (["recommend", "--custom-model", "{not json"], ["--custom-model"]),
    (["estimate", "--gpu", "h900", "--count", "1", "--model", "llama-3.1-8b"], ["--gpu", "h100-sxm"]),
    (["estimate", "--gpu", "h100", "--count", "0", "--model", "llama-3.1-8b"], ["--count", ">= 1"]),
]


@pytest.mark.parametrize(("arguments", "expected"), ERRORS)
def test_bad_input_is_one_line_naming_the_problem(cli: CliRunner, arguments: list[str], expected: list[str]) -> None:
    result = cli.invoke(main, arguments)
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    for text in expected:
        assert text in lines[0]


# the rest of the command


def test_commands_are_listed(cli: CliRunner) -> None:
    out = cli.invoke(main, ["--help"]).stdout
    for command in ("recommend", "estimate", "compare", "prices", "tco", "gpus", "seed", "serve"):
        assert command in out
    prices = cli.invoke(main, ["prices", "--help"]).stdout
    assert "--max-usd-per-gpu-hour" in prices and "import" in prices and "export" in prices


async def test_seed_prints_no_spinner_off_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = sqlite_url(tmp_path)
    await migrate_and_seed(url)
    monkeypatch.setenv("DATABASE_URL", url)
    result = await run(CliRunner(), "seed")
    assert result.stdout.startswith("seeded catalog") and result.stderr == ""


def test_money_and_sources_are_short() -> None:
    assert money(1234.5, "USD") == "$1,234" and money(12.345, "CNY") == "¥12.35" and money(-54000, "USD") == "-$54,000"
    assert shorten("https://www.example.com/pricing/gpus", 20) == "example.com/pricing…"
    assert shorten("kaelresearch.com 2026-02") == "kaelresearch.com 2026-02"
