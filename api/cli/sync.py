"""`gpu-advisor prices sync`: bring offers up to date from the gpuhunt feed, or show what that would change."""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import UTC, datetime
from typing import Any

import click

from api.settings import Settings, SettingsError
from domain.pricing.feed import FEED_PROVIDERS


def _document(report: Any) -> dict[str, Any]:
    """The sync report as JSON: per provider added, changed (old -> new), gone and kept offers; failures."""

    def offer(o: Any) -> dict[str, Any]:
        return {
            "id": o.id,
            "gpu": o.gpu,
            "gpus_per_instance": o.gpus_per_instance,
            "pricing": o.pricing,
            "tier": o.tier,
            "usd_per_gpu_hour": o.usd_per_gpu_hour,
        }

    return {
        "applied": report.applied,
        "catalog_url": report.catalog_url,
        "catalog_version": report.version or None,
        "providers": [
            {
                "provider": d.provider,
                "added": [offer(o) for o in d.added],
                "changed": [offer(c.offer) | {"old_usd_per_gpu_hour": c.old_usd_per_gpu_hour} for c in d.changed],
                "gone": [offer(o) for o in d.gone],
                "kept": [offer(o) | {"reason": "an administrator's price is as new or newer"} for o in d.kept],
                "superseded": [offer(o) | {"by": by} for o, by in d.superseded],
                "unchanged": d.unchanged,
                "unmapped_gpus": d.unmapped,
            }
            for d in report.diffs
        ],
        "failed": [{"provider": p, "error": e} for p, e in sorted(report.failed.items())],
    }


def _table(report: Any) -> None:
    from rich.table import Table

    from api.cli.tables import console

    table = Table(title="prices sync" + ("" if report.applied else " (nothing written)"))
    for column in ("provider", "change", "offer", "gpu", "USD/GPU-h"):
        table.add_column(column)
    for d in report.diffs:
        for o in d.added:
            table.add_row(d.provider, "added", o.id, o.gpu, f"{o.usd_per_gpu_hour:g}")
        for c in d.changed:
            table.add_row(
                d.provider,
                "changed",
                c.offer.id,
                c.offer.gpu,
                f"{c.old_usd_per_gpu_hour:g} -> {c.offer.usd_per_gpu_hour:g}",
            )
        for o in d.gone:
            table.add_row(d.provider, "gone", o.id, o.gpu, f"{o.usd_per_gpu_hour:g}")
        for o in d.kept:
            table.add_row(d.provider, "kept (administrator's price is newer)", o.id, o.gpu, f"{o.usd_per_gpu_hour:g}")
        for o, by in d.superseded:
            table.add_row(d.provider, f"superseded by {by}", o.id, o.gpu, f"{o.usd_per_gpu_hour:g}")
        table.add_row(d.provider, "unchanged", str(d.unchanged), "", "")
    out = console()
    out.print(table)
    for provider, error in sorted(report.failed.items()):
        console(stderr=True).print(f"{provider}: not synced, nothing of it changed: {error}")
    if not report.diffs:
        console(stderr=True).print(f"no provider answered (catalogs at {report.catalog_url}): nothing was written")


@click.command("sync")
@click.option(
    "--provider",
    "providers",
    multiple=True,
    type=click.Choice(list(FEED_PROVIDERS)),
    # Eighteen names do not fit one 80-column line: the help text lists them and lets the terminal wrap them.
    metavar="NAME",
    help="Only this gpuhunt provider (repeatable): " + ", ".join(FEED_PROVIDERS) + " [default: all of them].",
)
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def sync(providers: tuple[str, ...], dry_run: bool, as_json: bool) -> None:
    """Fetch offers through gpuhunt (GPUHUNT_CATALOG_URL) and write added, changed and gone offers with history."""
    from sqlalchemy.ext.asyncio import AsyncSession

    from api.adapters.gpuhunt import fetch
    from api.adapters.storage.catalog_repository import load_catalog
    from api.cli.writes import write_and_announce
    from api.services.price_sync import SyncReport
    from api.services.price_sync import sync as run_sync
    from domain.catalog import CatalogError

    try:
        settings = Settings.from_env()
    except SettingsError as error:
        raise click.ClickException(str(error)) from None
    fetched = fetch(list(providers) or list(FEED_PROVIDERS))

    async def work(session: AsyncSession) -> SyncReport:
        catalog = await load_catalog(session)
        if catalog is None:
            raise click.ClickException("the database holds no catalog: run gpu-advisor migrate first")
        return await run_sync(session, catalog, fetched, now=datetime.now(UTC), apply=not dry_run)

    try:
        report = asyncio.run(write_and_announce(settings, work, lambda done: done.version if done.applied else None))
    except CatalogError as error:
        raise click.ClickException("nothing was synced: " + "; ".join(error.problems)) from None
    if as_json:
        click.echo(json.dumps(_document(report), indent=2))
    else:
        _table(report)
    if report.failed and not report.diffs:
        sys.exit(1)
