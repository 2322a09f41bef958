"""The `gpu-advisor` command: serve, migrate, seed, openapi, gpus."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from api.settings import Settings, SettingsError

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
    if report.kept_newer:
        click.echo(f"kept newer stored prices for: {', '.join(report.kept_newer)}")


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
    from api.services import Services

    async def load() -> object:
        services = await Services.start(_settings())
        try:
            return services.view.catalog
        finally:
            await services.close()

    from domain.catalog import Catalog
    from domain.compare import half_precision_tflops

    catalog = asyncio.run(load())
    assert isinstance(catalog, Catalog)
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


if __name__ == "__main__":
    main()
