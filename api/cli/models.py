"""`gpu-advisor models import`: add a language model to the catalog from its config.json, with a history row."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import click

from api.settings import Settings, SettingsError


@click.group("models")
def models() -> None:
    """Administer the catalog's workload models."""


@models.command("list")
@click.option("--kind", type=click.Choice(["llm", "diffusion"]), help="Only language models or image pipelines.")
@click.option("--family", help="Only this family (e.g. qwen, llama, deepseek).")
@click.option(
    "--json", "as_json", is_flag=True, help="Print the JSON document GET /v1/models returns, and nothing else."
)
@click.option("--wide", is_flag=True, help="Every column, however wide (the table fits the terminal otherwise).")
def models_list(kind: str | None, family: str | None, as_json: bool, wide: bool) -> None:
    """List the models the catalog can size (the ids and aliases --model takes), like GET /v1/models."""
    from api.cli.catalog_tables import models_view
    from api.cli.common import _load_view, _print_json
    from api.cli.tables import show
    from api.schemas import DiffusionModelRead, LlmModelRead, ModelList

    wanted = {"llm": LlmModelRead, "diffusion": DiffusionModelRead}.get(kind or "", object)
    items = [
        model
        for model in _load_view().models.values()
        if isinstance(model, wanted) and (family is None or model.family == family.lower())
    ]
    if as_json:
        _print_json(ModelList(items=items, total=len(items)))
        return
    show(models_view(items), wide=wide)


@models.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--id", "model_id", required=True, help="Catalog id for the model (lowercase, digits, dots, hyphens).")
@click.option("--name", help="Display name [default: the id].")
@click.option("--alias", "aliases", multiple=True, help="Another name it may be asked for by (repeatable).")
@click.option("--source", help="Where the config.json comes from [default: the file name].")
def models_import(file: Path, model_id: str, name: str | None, aliases: tuple[str, ...], source: str | None) -> None:
    """Derive a model from FILE (a config.json) and store it like PUT /v1/admin/models/{id}, in one transaction."""
    import msgspec
    from sqlalchemy.ext.asyncio import AsyncSession

    from api.adapters.storage.model_repository import ModelWriteReport, write_model
    from api.cli.writes import write_and_announce
    from api.routes.models_admin import ModelWrite, derive_model
    from domain.catalog import CatalogError

    try:
        settings = Settings.from_env()
    except SettingsError as error:
        raise click.ClickException(str(error)) from None
    try:
        config: Any = json.loads(file.read_text(encoding="utf-8-sig"))
        body = msgspec.convert(
            {"hf_config": config, "name": name or "", "aliases": list(aliases), "sources": [source or file.name]},
            ModelWrite,
        )
        model = derive_model(model_id, body)
    except (ValueError, msgspec.ValidationError) as error:
        raise click.ClickException(f"{file}: {error}") from None

    async def work(session: AsyncSession) -> ModelWriteReport:
        return await write_model(session, model, actor=f"import:{file.name}")

    try:
        report = asyncio.run(write_and_announce(settings, work, lambda done: done.version if done.changed else None))
    except CatalogError as error:
        raise click.ClickException("nothing was imported: " + "; ".join(error.problems)) from None
    what = "created" if report.created else ("updated" if report.changed else "unchanged")
    click.echo(
        f"{what} {model.id}: {model.params_b:g}B parameters, {model.layers} layers; "
        f"catalog {report.version or 'unchanged'}"
    )
