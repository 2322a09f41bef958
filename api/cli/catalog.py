"""The catalog from a terminal: GPUs, and prices with their import and export."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from api.cli.common import (
    PRICING,
    VENDORS,
    InputError,
    OneOf,
    _json_option,
    _lang_option,
    _load_catalog,
    _not_in_catalog,
    _print_json,
    _settings,
    _wide_option,
)
from api.cli.sync import sync
from api.cli.tables import console, show


@click.command()
@click.option("--vendor", type=OneOf(VENDORS), help="Only this vendor.")
@click.option(
    "--sort",
    type=OneOf(["name", "memory", "bandwidth", "bf16", "price"]),
    default="name",
    show_default=True,
)
@_wide_option
def gpus(vendor: str | None, sort: str, wide: bool) -> None:
    """Print the GPU catalog as a table."""

    from api.cli.catalog_tables import gpus_view
    from domain.pricing.compare import half_precision_tflops

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
    show(gpus_view(catalog.version, rows, price), wide=wide)


# Offers: the listing, import and export


def _given(ctx: click.Context) -> list[str]:
    """The options of a command that were set on the command line or from the environment."""
    from click.core import ParameterSource

    return [
        param.opts[0]
        for param in ctx.command.params
        if param.name is not None and ctx.get_parameter_source(param.name) not in (ParameterSource.DEFAULT, None)
    ]


@click.group(invoke_without_command=True)
@click.option("--gpu", help="Only this GPU (id or alias).")
@click.option("--provider", help="Only this provider (id).")
@click.option("--pricing", type=OneOf(PRICING), help="Only this pricing model.")
@click.option(
    "--max-usd-per-gpu-hour",
    type=click.FloatRange(0, 10_000, min_open=True),
    help="Price ceiling in USD per GPU-hour.",
)
@click.option("--max-age-days", type=click.IntRange(0, 100_000), help="Only prices seen at most this many days ago.")
@click.option(
    "--sort",
    type=OneOf(["price", "age", "gpu", "provider"]),
    default="price",
    show_default=True,
    help="price: cheapest first; age: newest first.",
)
@click.option("--order", type=OneOf(["asc", "desc"]), help="Reverse or force the direction of --sort.")
@click.option("--limit", type=click.IntRange(1, 200), default=200, show_default=True, help="Offers to show.")
@click.option("--offset", type=click.IntRange(0, 100_000), default=0, show_default=True, help="Offers to skip.")
@_lang_option
@_json_option
@_wide_option
@click.pass_context
def prices(ctx: click.Context, **values: Any) -> None:
    """List rental offers (the filters of GET /v1/offers); `prices import` and `prices export` manage them.

    CSV of `prices import` and `prices export`: the header `prices export` prints.
    """
    if ctx.invoked_subcommand is not None:
        given = _given(ctx)
        if given:
            raise InputError(f"{', '.join(given)} list offers; give them without `{ctx.invoked_subcommand}`")
        return
    from api.services.catalog_view import NotInCatalog, find_gpu, find_provider, offer_list

    catalog = _load_catalog()
    today = datetime.now(UTC).date()
    try:
        gpu_id = find_gpu(catalog, values["gpu"]).id if values["gpu"] is not None else None
        if values["provider"] is not None:
            find_provider(catalog, values["provider"])
    except NotInCatalog as missing:
        raise _not_in_catalog(missing, {"GPU": "--gpu", "provider": "--provider"}) from None
    page = offer_list(
        catalog,
        today,
        gpu_id=gpu_id,
        provider=values["provider"],
        pricing=values["pricing"],
        max_usd_per_gpu_hour=values["max_usd_per_gpu_hour"],
        max_age_days=values["max_age_days"],
        sort="as_of" if values["sort"] == "age" else values["sort"],
        order=values["order"],
        limit=values["limit"],
        offset=values["offset"],
    )
    if values["as_json"]:
        _print_json(page)
        return
    from api.cli.catalog_tables import offers_view

    show(offers_view(page, values["lang"]), wide=values["wide"])


@prices.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_json_option
def prices_import(file: Path, as_json: bool) -> None:
    """Create or update offers from a CSV or JSON file, all or nothing; progress goes to stderr."""
    import msgspec
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from api.adapters.storage.database import create_engine, create_session_factory
    from api.adapters.storage.offer_repository import WriteReport, write_offers
    from api.schemas import OfferBulkRead
    from api.services.catalog_sync import announce
    from api.services.offer_import import Row, RowErrors, csv_rows, json_rows, parse_rows
    from domain.catalog import CatalogError, Offer

    settings = _settings()
    catalog = _load_catalog()
    text = file.read_text(encoding="utf-8-sig")
    lax = file.suffix.lower() != ".json"

    async def write(offers: list[Offer]) -> WriteReport:
        engine = create_engine(settings.database_url)
        try:
            async with create_session_factory(engine)() as session, session.begin():
                report = await write_offers(session, offers, [], actor=f"import:{file.name}")
            if report.changed:
                await announce(settings.redis_url, report.version, settings.redis_timeout_s)
            return report
        finally:
            await engine.dispose()

    progress = Progress(
        SpinnerColumn(finished_text="✓"),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console(stderr=True),
    )
    try:
        with progress:
            reading = progress.add_task(f"reading {file.name}", total=None)
            rows = json_rows(msgspec.json.decode(text)) if not lax else csv_rows(text)
            progress.update(reading, total=len(rows), completed=len(rows), description=f"read {file.name}")
            checking = progress.add_task("validating rows", total=len(rows))

            def counted(rows: list[Row]) -> Iterator[Row]:
                for row in rows:
                    yield row
                    progress.advance(checking)

            offers = parse_rows(counted(rows), catalog, lax=lax)
            progress.update(checking, description="validated rows")
            writing = progress.add_task(f"writing {len(offers)} offers", total=None)
            report = asyncio.run(write(offers))
            progress.update(writing, total=len(offers), completed=len(offers), description="wrote offers")
    except (RowErrors, msgspec.DecodeError) as error:
        for problem in getattr(error, "errors", []) or [error]:
            line = getattr(problem, "line", 1)
            click.echo(
                f"{file}:{line}: {getattr(problem, 'field', 'file')}: {getattr(problem, 'message', problem)}", err=True
            )
        raise click.ClickException("nothing was imported") from None
    except CatalogError as error:
        raise click.ClickException("nothing was imported: " + "; ".join(error.problems)) from None
    if as_json:
        _print_json(
            OfferBulkRead(
                created=report.created,
                updated=report.updated,
                unchanged=report.unchanged,
                catalog_version=report.version or catalog.version,
            )
        )
        return
    click.echo(
        f"created {len(report.created)}, updated {len(report.updated)}, unchanged {len(report.unchanged)}; "
        f"catalog {report.version or 'unchanged'}"
    )


@prices.command("export")
def prices_export() -> None:
    """Print every offer as CSV, in the format `prices import` reads."""
    from api.services.offer_import import offers_csv

    click.echo(offers_csv(_load_catalog().offers), nl=False)


prices.add_command(sync)
