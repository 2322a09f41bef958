"""Running the service: serve, migrate, seed, the OpenAPI document and the MCP server on stdio."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from api.settings import Settings

if TYPE_CHECKING:
    pass
from api.cli.common import (
    DEFAULT_OPENAPI_PATH,
    _print_seed,
    _settings,
    _waiting,
)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535), help="Port to listen on.")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64), help="Worker processes.")
@click.option("--migrate/--no-migrate", default=None, help="Apply migrations and seed first [default: on].")
def serve(host: str, port: int, workers: int, migrate: bool | None) -> None:
    """Run the HTTP service (SQLite file and in-process cache when nothing is configured)."""
    from api.adapters.storage.bootstrap import migrate_and_seed
    from api.server import run as run_server

    settings = _settings()
    if migrate if migrate is not None else settings.auto_migrate:
        with _waiting("migrating the database and seeding the catalog"):
            report = asyncio.run(migrate_and_seed(settings.database_url))
        _print_seed(report)
    click.echo(
        f"gpu-advisor on http://{host}:{port} (database: {settings.database_url.split('://')[0]}, "
        f"cache: {'redis' if settings.redis_url else 'in-process'}, workers: {workers})"
    )
    # api.server bounds request heads, times out slow clients and exits non-zero when the app cannot start.
    run_server("api.app:create_app_from_env", settings, host=host, port=port, workers=workers, factory=True)


@click.command()
def migrate() -> None:
    """Apply database migrations up to the newest."""
    from api.adapters.storage.migrate import upgrade

    settings = _settings()
    with _waiting("applying migrations"):
        upgrade(settings.database_url)
    click.echo("database at the newest migration")


@click.command()
def seed() -> None:
    """Load the shipped reference catalog into the database (idempotent; changed prices get a history row)."""
    from api.adapters.storage.bootstrap import seed_database

    url = _settings().database_url
    with _waiting("seeding the catalog from the reference data"):
        report = asyncio.run(seed_database(url))
    _print_seed(report)


@click.command()
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


@click.command("mcp")
def mcp_command() -> None:
    """Serve the chatbot tools over MCP on stdin/stdout (for chat clients that start a local server)."""
    from api.app import API_VERSION
    from api.chat.mcp_server import serve_stdio
    from api.logs import configure_logging

    settings = _settings()
    # stdout carries the protocol; logs go to stderr.
    configure_logging(settings.log_level, settings.log_format)
    asyncio.run(serve_stdio(settings, API_VERSION))
