"""What every command shares: settings, option types, one-line input errors, catalog loading, JSON output."""

from __future__ import annotations

import asyncio
import difflib
import errno
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

import click

from api.cli.tables import console
from api.settings import Settings, SettingsError
from domain.catalog import Catalog, Ecosystem, Pricing, Vendor

if TYPE_CHECKING:
    from api.services.catalog_view import CatalogView, NotInCatalog

DEFAULT_OPENAPI_PATH = Path("openapi/openapi.json")
PRICING: tuple[str, ...] = get_args(Pricing)
VENDORS: tuple[str, ...] = get_args(Vendor)
ECOSYSTEMS: tuple[str, ...] = get_args(Ecosystem)
LANGS = ("en", "zh")


class InputError(click.ClickException):
    """Input the command cannot use: one line on stderr, exit code 2 like click's own usage errors."""

    exit_code = 2


class CommaList(click.ParamType):
    """A comma-separated list, each item one of `choices` when given."""

    name = "list"

    def __init__(self, choices: Sequence[str] | None = None) -> None:
        self.choices = tuple(choices) if choices else None

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "[" + ",".join(self.choices) + "]" if self.choices else "A,B,..."

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> list[str]:
        if isinstance(value, list):
            return value
        items = [part.strip() for part in str(value).split(",") if part.strip()]
        option = param.opts[0] if param is not None else "value"
        if not items:
            raise InputError(f"{option}: give at least one value")
        for item in items:
            if self.choices and item not in self.choices:
                close = difflib.get_close_matches(item, self.choices, n=1, cutoff=0.4)
                hint = f"; did you mean {close[0]}?" if close else ""
                raise InputError(f"{option}: {item!r} is not one of {', '.join(self.choices)}{hint}")
        return items


class OneOf(click.Choice):
    """A choice whose error names the closest valid value; a long list of choices is named in the help instead."""

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str | None:
        metavar = super().get_metavar(param, ctx)
        # Click writes the metavar beside the option unwrapped: a long one would push the help past 80 columns.
        if metavar is not None and len(metavar) > 40 and param.name:
            return param.name.upper()
        return metavar

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter:
            choices = [str(choice) for choice in self.choices]
            close = difflib.get_close_matches(str(value), choices, n=1, cutoff=0.4)
            hint = f"; did you mean {close[0]}?" if close else ""
            self.fail(f"{value!r} is not one of {', '.join(choices)}{hint}", param, ctx)


class Commands(click.Group):
    """The command group: a bad option value (exit 2) or a database not ready (exit 1) is one line on stderr."""

    def invoke(self, ctx: click.Context) -> Any:
        from api.adapters.storage.database import DATABASE_ERRORS, explain_database_error

        try:
            return super().invoke(ctx)
        except click.BadParameter as error:
            raise InputError(error.format_message()) from None
        except DATABASE_ERRORS as error:
            if isinstance(error, OSError) and not _is_connection_error(error):
                raise  # a file the command reads or writes, named by its own error
            raise click.ClickException(explain_database_error(error, _database_url())) from None


def _is_connection_error(error: OSError) -> bool:
    return isinstance(error, ConnectionError | TimeoutError) or error.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH)


def _database_url() -> str:
    try:
        return Settings.from_env().database_url
    except SettingsError:
        return ""


def _settings() -> Settings:
    try:
        return Settings.from_env()
    except SettingsError as error:
        raise InputError(str(error)) from None


def _print_seed(report: object) -> None:
    from api.adapters.storage.catalog_repository import SeedReport

    assert isinstance(report, SeedReport)
    changes = ", ".join(
        f"{table}: +{report.inserted.get(table, 0)} ~{report.updated.get(table, 0)}" for table in report.inserted
    )
    click.echo(textwrap.fill(f"seeded catalog {report.version} ({changes})", width=80, subsequent_indent="  "))
    if report.kept:
        kept = f"kept as administrators left them: {', '.join(report.kept)}"
        click.echo(textwrap.fill(kept, width=80, subsequent_indent="  ", break_on_hyphens=False))


def _waiting(message: str) -> Any:
    """A spinner on stderr while something slow runs; nothing when stderr is not a terminal."""
    return console(stderr=True).status(message)


def _lang_option(command: Callable[..., None]) -> Callable[..., None]:
    return click.option(
        "--lang",
        type=OneOf(LANGS),
        default="en",
        show_default=True,
        help="Language of the headers and of every sentence.",
    )(command)


def _json_option(command: Callable[..., None]) -> Callable[..., None]:
    return click.option(
        "--json", "as_json", is_flag=True, help="Print the JSON document the HTTP API returns, and nothing else."
    )(command)


def _wide_option(command: Callable[..., None]) -> Callable[..., None]:
    return click.option(
        "--wide", is_flag=True, help="Every column of every table, however wide (tables fit the terminal otherwise)."
    )(command)


def _print_json(document: Any) -> None:
    import msgspec

    click.echo(msgspec.json.encode(document).decode())


def _load_view() -> CatalogView:
    """The catalog the service would serve now: the database's, else the shipped reference data."""
    from api.wiring import Services

    async def load() -> CatalogView:
        services = await Services.start(_settings())
        try:
            return services.view
        finally:
            await services.close()

    return asyncio.run(load())


def _load_catalog() -> Catalog:
    return _load_view().catalog


# Errors: name the option, not the JSON field


_AT_FIELD = re.compile(r" - at `\$(?:\[\d+\])?\.([\w.\[\]]+)`")


def _option(field: str, renames: Mapping[str, str]) -> str:
    """The command-line option a request field comes from: workload.max_ttft_ms -> --max-ttft-ms."""
    path = re.sub(r"\[\d+\]", "", field).split(".")
    if len(path) > 1 and path[0] in ("workload", "constraints"):
        path = path[1:]
    return " ".join([renames.get(path[0], "--" + path[0].replace("_", "-")), *path[1:]])


def _rejected(field: str, message: str, renames: Mapping[str, str]) -> InputError:
    return InputError(f"{_option(field, renames)}: {message}")


def _not_in_catalog(missing: NotInCatalog, options: Mapping[str, str]) -> InputError:
    return InputError(f"{options.get(missing.kind, missing.kind)}: {missing}")


def _decode(document: dict[str, Any], target: Any, renames: Mapping[str, str] | None = None) -> Any:
    """The request struct for a document built from options; a range or type problem names the option."""
    import msgspec

    try:
        return msgspec.convert(document, target)
    except msgspec.ValidationError as error:
        from api.schemas.allowed_values import allowed_values, teach

        text = str(error)
        found = _AT_FIELD.search(text)
        message = re.sub(r"^Expected `\w+`,? (?:that's )?", "must be ", text.split(" - at `$")[0])
        if found is None:
            raise InputError(message) from None
        message, _ = teach(message, allowed_values(target, found.group(1), document))
        raise _rejected(found.group(1), message, renames or {}) from None


# Workloads
