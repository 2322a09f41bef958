"""Terminal tables at 80 columns: nothing wider than the terminal, no GPU, count, price or cost cut to "…"."""

from __future__ import annotations

import asyncio

import pytest
from click.testing import CliRunner
from rich.cells import cell_len

from api.cli import main

# Headers (English and Chinese) of the columns that must never be cut: GPU, counts, prices and costs.
KEY_HEADERS = (
    "GPU",
    "卡数",
    "per hour",
    "每小时",
    "per unit",
    "单位成本",
    "USD",
    "美元",
    "total",
    "合计",
    "per year",
    "每年",
    "capex",
    "购置",
    "financing",
    "power",
    "电费",
    "operations",
    "运维",
    "resale",
    "残值",
    "instances",
    "实例",
    "on demand",
    "按需",
)

COMMANDS = [
    ["recommend", "--model", "llama-3.1-70b", "--concurrency", "32"],
    ["recommend", "--kind", "training", "--model", "llama-3.1-8b", "--train-tokens", "1e10", "--target-days", "10"],
    ["recommend", "--kind", "fine_tuning", "--model", "llama-3.1-8b", "--method", "qlora"],
    ["recommend", "--kind", "image_generation", "--model", "sdxl", "--images-per-hour", "5000"],
    ["estimate", "--model", "deepseek-r1", "--gpu", "b200", "--count", "8"],
    [
        "estimate",
        "--kind",
        "training",
        "--model",
        "llama-3.1-8b",
        "--train-tokens",
        "1e10",
        "--gpu",
        "h100",
        "--count",
        "8",
    ],
    ["compare", "h100-sxm", "h200"],
    ["compare", "h100-sxm", "h200", "mi300x", "b200", "gb200", "a100-sxm-80gb", "l40s", "mi325x"],
    ["prices"],
    ["prices", "--gpu", "h100-sxm", "--sort", "price"],
    ["tco", "--gpu", "h100-sxm"],
    ["tco", "--system", "dgx-h100", "--years", "5", "--currency", "CNY"],
]


@pytest.fixture
def cli(seeded_sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("DATABASE_URL", seeded_sqlite_url)
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv("COLUMNS", "80")
    return CliRunner()


async def render(cli: CliRunner, arguments: list[str]) -> str:
    result = await asyncio.to_thread(cli.invoke, main, arguments)
    assert result.exit_code == 0, result.output
    return result.stdout


def tables(out: str) -> list[tuple[list[str], list[list[str]]]]:
    """Each table drawn in the output: its column headers and its rows (lines split at the column rules)."""
    found: list[tuple[list[str], list[list[str]]]] = []
    headers: list[str] | None = None
    rows: list[list[str]] = []
    for line in out.splitlines():
        stripped = line.strip()
        if stripped.startswith("┏") or stripped.startswith("┌"):
            headers, rows = None, []
        elif stripped.startswith("┃"):
            cells = [cell.strip() for cell in stripped.strip("┃").split("┃")]
            headers = cells if headers is None else [f"{a} {b}".strip() for a, b in zip(headers, cells, strict=True)]
        elif stripped.startswith("│"):
            rows.append([cell.strip() for cell in stripped.strip("│").split("│")])
        elif stripped.startswith("└"):
            found.append((headers or [""] * len(rows[0]), rows))
    return found


def key_columns(headers: list[str]) -> list[int]:
    return [index for index, header in enumerate(headers) if any(key in header for key in KEY_HEADERS)]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("arguments", COMMANDS, ids=[" ".join(command[:2]) for command in COMMANDS])
async def test_tables_fit_80_columns_without_cutting_figures(cli: CliRunner, arguments: list[str], lang: str) -> None:
    out = await render(cli, [*arguments, "--lang", lang])
    assert max(cell_len(line) for line in out.splitlines()) <= 80
    drawn = tables(out)
    assert drawn, out
    for headers, rows in drawn:
        for index in key_columns(headers):
            cut = [row[index] for row in rows if "…" in row[index]]
            assert not cut, (headers[index], cut, out)


async def test_at_80_columns_every_figure_of_the_options_is_there(cli: CliRunner) -> None:
    import json

    document = json.loads(await render(cli, ["recommend", "--model", "llama-3.1-70b", "--json"]))
    out = await render(cli, ["recommend", "--model", "llama-3.1-70b"])
    from domain.narrative.explain import money

    for option in document["options"]:
        assert money(option["cost"]["hourly"], "USD") in out
        assert money(option["cost"]["per_million_tokens"], "USD") in out
        assert option["gpu"]["id"] in out and option["offer"]["provider"] in out


async def test_wide_shows_every_column(cli: CliRunner) -> None:
    narrow = await render(cli, ["prices", "--gpu", "h100-sxm"])
    wide = await render(cli, ["prices", "--gpu", "h100-sxm", "--wide"])
    narrow_headers = {header for headers, _ in tables(narrow) for header in headers}
    wide_headers = {header for headers, _ in tables(wide) for header in headers}
    assert {"source", "age (days)"} <= wide_headers and not {"source", "age (days)"} & narrow_headers
    options = await render(cli, ["recommend", "--model", "llama-3.1-70b", "--wide"])
    assert "score" in tables(options)[0][0] and max(cell_len(line) for line in options.splitlines()) > 80


async def test_assumption_names_follow_the_language(cli: CliRunner) -> None:
    zh = await render(cli, ["recommend", "--model", "llama-3.1-70b", "--lang", "zh"])
    en = await render(cli, ["recommend", "--model", "llama-3.1-70b"])
    assert "解码显存带宽利用率" in zh and "decode_mbu" not in zh
    assert "decode memory-bandwidth" in en and "decode_mbu" not in en
    tco = await render(cli, ["tco", "--gpu", "h100-sxm", "--lang", "zh"])
    assert "电价" in tco and "electricity_usd_per_kwh" not in tco


async def test_comparison_cells_are_words_not_codes(cli: CliRunner) -> None:
    zh = await render(cli, ["compare", "h100-sxm", "mi300x", "--lang", "zh"])
    assert "官方规格书" in zh and "NVSwitch" in zh and "Infinity Fabric" in zh and "ROCm" in zh
    for code in ("datasheet", "nvswitch", "infinity_fabric", " cuda ", " rocm "):
        assert code not in zh, code
