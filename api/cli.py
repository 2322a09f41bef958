"""The `gpu-advisor` command: serve, migrate, seed, openapi, gpus."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from api.settings import Settings, SettingsError
from domain.catalog import Catalog

DEFAULT_OPENAPI_PATH = Path("openapi/openapi.json")


def _settings() -> Settings:
    try:
        return Settings.from_env()
    except SettingsError as error:
        raise click.UsageError(str(error)) from error


def _print_seed(report: object) -> None:
    from api.storage.catalog_repository import SeedReport

    assert isinstance(report, SeedReport)
    changes = ", ".join(
        f"{table}: +{report.inserted.get(table, 0)} ~{report.updated.get(table, 0)}" for table in report.inserted
    )
    click.echo(f"seeded catalog {report.version} ({changes})")
    if report.kept:
        click.echo(f"kept as administrators left them: {', '.join(report.kept)}")


@click.group()
def main() -> None:
    """gpu-advisor: GPU pricing and recommendations for AI workloads."""


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535), help="Port to listen on.")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64), help="Worker processes.")
@click.option("--migrate/--no-migrate", default=None, help="Apply migrations and seed first [default: on].")
def serve(host: str, port: int, workers: int, migrate: bool | None) -> None:
    """Run the HTTP service (SQLite file and in-process cache when nothing is configured)."""
    import uvicorn

    from api.storage.bootstrap import migrate_and_seed

    settings = _settings()
    if migrate if migrate is not None else settings.auto_migrate:
        _print_seed(asyncio.run(migrate_and_seed(settings.database_url)))
    click.echo(
        f"gpu-advisor on http://{host}:{port} (database: {settings.database_url.split('://')[0]}, "
        f"cache: {'redis' if settings.redis_url else 'in-process'}, workers: {workers})"
    )
    uvicorn.run(
        "api.app:create_app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level=settings.log_level.lower(),
        proxy_headers=True,
    )


@main.command()
def migrate() -> None:
    """Apply database migrations up to the newest."""
    from api.storage.migrate import upgrade

    settings = _settings()
    upgrade(settings.database_url)
    click.echo("database at the newest migration")


@main.command()
def seed() -> None:
    """Load the shipped reference catalog into the database (idempotent; changed prices get a history row)."""
    from api.storage.bootstrap import seed_database

    _print_seed(asyncio.run(seed_database(_settings().database_url)))


@main.command()
@click.option("--output", type=click.Path(path_type=Path), default=DEFAULT_OPENAPI_PATH, show_default=True)
@click.option("--check", is_flag=True, help="Exit 1 if the file differs from what the app publishes.")
def openapi(output: Path, check: bool) -> None:
    """Export the OpenAPI document the service publishes."""
    from api.app import create_app

    document = json.dumps(create_app(Settings()).openapi_schema.to_schema(), indent=2, ensure_ascii=False) + "\n"
    if check:
        if not output.exists() or output.read_text(encoding="utf-8") != document:
            click.echo(f"{output} is out of date: run `gpu-advisor openapi`", err=True)
            sys.exit(1)
        click.echo(f"{output} is up to date")
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(document, encoding="utf-8")
    click.echo(f"wrote {output}")


@main.command()
@click.option("--vendor", type=click.Choice(["nvidia", "amd", "intel", "huawei"]), help="Only this vendor.")
@click.option(
    "--sort",
    type=click.Choice(["name", "memory", "bandwidth", "bf16", "price"]),
    default="name",
    show_default=True,
)
def gpus(vendor: str | None, sort: str) -> None:
    """Print the GPU catalog as a table."""
    from domain.compare import half_precision_tflops

    catalog = _load_catalog()
    rows = [gpu for gpu in catalog.gpus if vendor is None or gpu.vendor == vendor]

    def price(gpu_id: str) -> float | None:
        offer = catalog.lowest_prices(gpu_id).get("on_demand")
        return offer.usd_per_gpu_hour if offer else None

    keys = {
        "name": lambda g: (g.name,),
        "memory": lambda g: (-g.memory_gb, g.name),
        "bandwidth": lambda g: (-g.memory_bandwidth_gbps, g.name),
        "bf16": lambda g: (-(half_precision_tflops(g) or 0), g.name),
        "price": lambda g: (price(g.id) is None, price(g.id) or 0, g.name),
    }
    rows.sort(key=keys[sort])
    table = Table(title=f"gpu-advisor catalog {catalog.version}: {len(rows)} GPUs (dense TFLOPS)")
    for column, justify in [
        ("id", "left"),
        ("name", "left"),
        ("memory", "right"),
        ("GB/s", "right"),
        ("BF16", "right"),
        ("FP8", "right"),
        ("TDP W", "right"),
        ("link", "left"),
        ("stack", "left"),
        ("$/GPU-h", "right"),
    ]:
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for gpu in rows:
        bf16, usd = half_precision_tflops(gpu), price(gpu.id)
        table.add_row(
            gpu.id,
            gpu.name + (" (low confidence)" if gpu.confidence == "low" else ""),
            f"{gpu.memory_gb:g} GB {gpu.memory_type}",
            f"{gpu.memory_bandwidth_gbps:g}",
            f"{bf16:g}" if bf16 else "-",
            f"{gpu.tflops.fp8:g}" if gpu.tflops.fp8 else "-",
            f"{gpu.tdp_w:g}",
            gpu.interconnect.kind,
            gpu.ecosystem,
            f"{usd:.2f}" if usd is not None else "-",
        )
    Console(width=int(os.environ.get("COLUMNS", "160"))).print(table)


@main.group()
def prices() -> None:
    """Import and export offer prices (CSV: the header of `prices export`)."""


@prices.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def prices_import(file: Path) -> None:
    """Create or update offers from a CSV or JSON file, all or nothing."""
    import msgspec

    from api.catalog_sync import announce
    from api.offer_import import RowErrors, csv_rows, json_rows, parse_rows
    from api.storage.database import create_engine, create_session_factory
    from api.storage.offer_repository import write_offers
    from domain.catalog import CatalogError

    settings = _settings()
    catalog = _load_catalog()
    text = file.read_text(encoding="utf-8-sig")
    try:
        if file.suffix.lower() == ".json":
            offers = parse_rows(json_rows(msgspec.json.decode(text)), catalog, lax=False)
        else:
            offers = parse_rows(csv_rows(text), catalog, lax=True)
    except (RowErrors, msgspec.DecodeError) as error:
        for problem in getattr(error, "errors", []) or [error]:
            line = getattr(problem, "line", 1)
            click.echo(
                f"{file}:{line}: {getattr(problem, 'field', 'file')}: {getattr(problem, 'message', problem)}", err=True
            )
        raise click.ClickException("nothing was imported") from None

    async def write() -> Any:
        engine = create_engine(settings.database_url)
        try:
            with Progress(transient=True) as progress:
                progress.add_task(f"importing {len(offers)} offers", total=None)
                async with create_session_factory(engine)() as session, session.begin():
                    report = await write_offers(session, offers, [], actor=f"import:{file.name}")
            if report.changed:
                await announce(settings.redis_url, report.version, settings.redis_timeout_s)
            return report
        finally:
            await engine.dispose()

    try:
        report = asyncio.run(write())
    except CatalogError as error:
        raise click.ClickException("nothing was imported: " + "; ".join(error.problems)) from None
    click.echo(
        f"created {len(report.created)}, updated {len(report.updated)}, unchanged {len(report.unchanged)}; "
        f"catalog {report.version or 'unchanged'}"
    )


@prices.command("export")
def prices_export() -> None:
    """Print every offer as CSV, in the format `prices import` reads."""
    from api.offer_import import offers_csv

    click.echo(offers_csv(_load_catalog().offers), nl=False)


def _load_catalog() -> Catalog:
    from api.services import Services

    async def load() -> Catalog:
        services = await Services.start(_settings())
        try:
            return services.view.catalog
        finally:
            await services.close()

    return asyncio.run(load())


_WORKLOAD_OPTIONS: list[tuple[str, dict[str, Any]]] = [
    (
        "--kind",
        {
            "type": click.Choice(["inference", "training", "fine_tuning", "image_generation"]),
            "default": "inference",
            "show_default": True,
            "help": "Workload kind.",
        },
    ),
    ("--model", {"help": "Catalog model id or alias (e.g. llama-3.1-70b, deepseek-r1, sdxl)."}),
    ("--precision", {"help": "fp32, bf16, fp16, fp8, int8, int4 or fp4."}),
    ("--kv-cache-precision", {"help": "KV cache precision (inference)."}),
    ("--input-tokens", {"type": int, "help": "Input tokens per request (inference)."}),
    ("--output-tokens", {"type": int, "help": "Output tokens per request (inference)."}),
    ("--concurrency", {"type": int, "help": "Sequences in flight (inference)."}),
    ("--requests-per-second", {"type": float, "help": "Request rate to sustain (inference)."}),
    ("--max-ttft-ms", {"type": float, "help": "Time-to-first-token target (inference)."}),
    ("--max-tpot-ms", {"type": float, "help": "Time-per-output-token target (inference)."}),
    ("--train-tokens", {"type": float, "help": "Tokens seen in the run (training, fine-tuning)."}),
    ("--sequence-length", {"type": int, "help": "Training sequence length."}),
    ("--target-days", {"type": float, "help": "Finish a training run within this many days."}),
    ("--target-hours", {"type": float, "help": "Finish a fine-tuning run within this many hours."}),
    ("--method", {"type": click.Choice(["full", "lora", "qlora"]), "help": "Fine-tuning method."}),
    ("--lora-rank", {"type": int, "help": "LoRA rank."}),
    ("--images-per-hour", {"type": float, "help": "Images per hour to sustain (image generation)."}),
    ("--width", {"type": int, "help": "Image width."}),
    ("--height", {"type": int, "help": "Image height."}),
    ("--steps", {"type": int, "help": "Denoising steps."}),
]
_FIELDS = {
    "inference": [
        "model",
        "precision",
        "kv_cache_precision",
        "input_tokens",
        "output_tokens",
        "concurrency",
        "requests_per_second",
        "max_ttft_ms",
        "max_tpot_ms",
    ],
    "training": ["model", "precision", "train_tokens", "sequence_length", "target_days"],
    "fine_tuning": ["model", "precision", "train_tokens", "sequence_length", "method", "lora_rank", "target_hours"],
    "image_generation": ["model", "precision", "width", "height", "steps", "images_per_hour"],
}


def _workload_options(command: Callable[..., None]) -> Callable[..., None]:
    for name, options in reversed(_WORKLOAD_OPTIONS):
        command = click.option(name, **options)(command)
    return command


def _workload(values: dict[str, Any]) -> dict[str, Any]:
    kind = values["kind"]
    unused = [
        f"--{k.replace('_', '-')}"
        for k, v in values.items()
        if v is not None and k not in _FIELDS[kind] and k != "kind" and k in _ALL_FIELDS
    ]
    if unused:
        raise click.UsageError(f"{', '.join(unused)} do not apply to --kind {kind}")
    return {"kind": kind} | {k: values[k] for k in _FIELDS[kind] if values.get(k) is not None}


_ALL_FIELDS = {field for fields in _FIELDS.values() for field in fields}


def _decode(document: dict[str, Any], target: Any) -> Any:
    import msgspec

    try:
        return msgspec.convert(document, target)
    except msgspec.ValidationError as error:
        raise click.UsageError(str(error)) from None


_HEADERS = {
    "en": ["#", "GPU", "GPUs", "TPxPPxDP", "offer", "$/hour", "performance", "unit cost", "targets", "score"],
    "zh": ["#", "GPU", "卡数", "TPxPPxDP", "报价", "每小时", "性能", "单位成本", "目标", "得分"],
}


def _print_options(options: list[Any], lang: str, title: str) -> None:
    table = Table(title=title)
    for header in _HEADERS[lang]:
        table.add_column(header)
    for option in options:
        perf = option.performance
        if perf is None:
            performance = "-"
        elif perf.tokens_per_second and perf.tpot_ms:
            performance = f"{perf.tokens_per_second.expected:,.0f} tok/s, {perf.tpot_ms.expected:.0f} ms/tok"
        elif perf.run_hours:
            performance = f"{perf.run_hours.expected:,.1f} h"
        elif perf.images_per_hour:
            performance = f"{perf.images_per_hour.expected:,.0f} img/h"
        else:
            performance = "-"
        cost = option.cost
        unit = "-"
        if cost is not None:
            value = cost.per_million_tokens or cost.per_run or cost.per_1000_images
            suffix = "/M tok" if cost.per_million_tokens else "/run" if cost.per_run else "/1k img"
            unit = f"{value:,.2f} {cost.currency}{suffix}" if value is not None else "-"
        par = option.parallelism
        table.add_row(
            str(option.rank),
            option.gpu.name,
            str(option.gpu_count),
            f"{par.tensor}x{par.pipeline}x{par.data}",
            f"{option.offer.provider} {option.offer.pricing}" if option.offer else "-",
            f"{cost.hourly:,.2f} {cost.currency}" if cost else "-",
            performance,
            unit,
            ("ok" if option.meets_targets else "missed") if option.feasible else "infeasible",
            f"{option.score:.2f}",
        )
    Console(width=int(os.environ.get("COLUMNS", "160"))).print(table)


@main.command()
@_workload_options
@click.option("--gpus", help="Only these GPUs (comma-separated ids or aliases).")
@click.option("--vendors", help="Only these vendors (comma-separated: nvidia, amd, intel, huawei).")
@click.option("--providers", help="Only these providers (comma-separated ids).")
@click.option("--pricing", help="Allowed pricing models (comma-separated; default on_demand).")
@click.option("--max-gpus", type=int, help="Largest GPU count to consider.")
@click.option("--max-usd-per-hour", type=float, help="Budget per hour.")
@click.option("--objective", type=click.Choice(["balanced", "cost", "speed"]), default="balanced", show_default=True)
@click.option("--currency", type=click.Choice(["USD", "CNY"]), default="USD", show_default=True)
@click.option("--lang", type=click.Choice(["en", "zh"]), default="en", show_default=True)
@click.option("--limit", type=click.IntRange(1, 50), default=10, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the JSON the API returns.")
def recommend(**values: Any) -> None:
    """Rank GPU options for a workload."""
    from datetime import UTC, datetime

    import msgspec

    from domain.ranking import RecommendationRequest
    from domain.ranking import recommend as rank
    from domain.workloads import WorkloadError

    def split(name: str) -> list[str] | None:
        return [part.strip() for part in values[name].split(",")] if values.get(name) else None

    constraints = {
        key: value
        for key, value in {
            "gpus": split("gpus"),
            "vendors": split("vendors"),
            "providers": split("providers"),
            "pricing": split("pricing"),
            "max_gpus": values["max_gpus"],
            "max_usd_per_hour": values["max_usd_per_hour"],
        }.items()
        if value is not None
    }
    request = _decode(
        {
            "workload": _workload(values),
            "constraints": constraints,
            "objective": values["objective"],
            "currency": values["currency"],
            "lang": values["lang"],
            "limit": values["limit"],
        },
        RecommendationRequest,
    )
    settings = _settings()
    catalog = _load_catalog()
    try:
        result = rank(catalog, request, now=datetime.now(UTC), lang=values["lang"], rate=settings.exchange_rate())
    except WorkloadError as error:
        raise click.UsageError(f"{error.field}: {error.message}") from None
    if values["as_json"]:
        click.echo(msgspec.json.encode(result).decode())
        return
    _print_options(result.options, values["lang"], f"{result.id} (catalog {result.catalog_version})")
    click.echo(result.summary)
    for exclusion in result.excluded:
        click.echo(f"  - {exclusion.gpu}: {exclusion.reason}")


@main.command()
@_workload_options
@click.option("--gpu", required=True, help="GPU id or alias.")
@click.option("--count", "gpu_count", type=click.IntRange(1, 4096), required=True, help="Number of GPUs.")
@click.option("--provider", help="Price with this provider's offers.")
@click.option("--pricing-model", "pricing", help="on_demand, reserved_1y, reserved_3y, spot or capacity_block.")
@click.option("--currency", type=click.Choice(["USD", "CNY"]), default="USD", show_default=True)
@click.option("--lang", type=click.Choice(["en", "zh"]), default="en", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the JSON the API returns.")
def estimate(**values: Any) -> None:
    """Estimate a workload on one explicit configuration."""
    from datetime import UTC, datetime

    import msgspec

    from domain.ranking import EstimateRequest
    from domain.ranking import estimate as run_estimate
    from domain.workloads import WorkloadError

    document = {
        "workload": _workload(values),
        "gpu": values["gpu"],
        "gpu_count": values["gpu_count"],
        "currency": values["currency"],
        "lang": values["lang"],
    } | {key: values[key] for key in ("provider", "pricing") if values.get(key)}
    request = _decode(document, EstimateRequest)
    settings = _settings()
    try:
        option = run_estimate(
            _load_catalog(), request, now=datetime.now(UTC), lang=values["lang"], rate=settings.exchange_rate()
        )
    except WorkloadError as error:
        raise click.UsageError(f"{error.field}: {error.message}") from None
    if values["as_json"]:
        click.echo(msgspec.json.encode(option).decode())
        return
    _print_options([option], values["lang"], f"{option.gpu_count}x {option.gpu.name}")
    for line in option.reasons + option.warnings:
        click.echo(f"  - {line}")


@main.command("mcp")
def mcp_command() -> None:
    """Serve the chatbot tools over MCP on stdin/stdout (for chat clients that start a local server)."""
    from api.app import API_VERSION
    from api.logs import configure_logging
    from api.mcp_server import serve_stdio

    settings = _settings()
    # stdout carries the protocol; logs go to stderr.
    configure_logging(settings.log_level, settings.log_format)
    asyncio.run(serve_stdio(settings, API_VERSION))


if __name__ == "__main__":
    main()
