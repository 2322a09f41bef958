"""The `gpu-advisor` command: run and administer the service, and ask it questions from a terminal.

`recommend`, `estimate`, `compare`, `prices` and `tco` answer with readable tables (`--lang zh` for Chinese) or,
with `--json`, with exactly the document the HTTP API returns for the same question. Bad input is one line on
stderr naming the option and the closest ids, exit code 2.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

import click

from api.cli_models import models
from api.cli_sync import sync
from api.cli_tables import console, show
from api.settings import Settings, SettingsError
from domain.catalog import Catalog, Ecosystem, Pricing, Vendor
from domain.estimates import Lang
from domain.workloads import WorkloadError

if TYPE_CHECKING:
    from api.catalog_view import CatalogView, NotInCatalog

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
    """A choice whose error names the closest valid value."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter:
            choices = [str(choice) for choice in self.choices]
            close = difflib.get_close_matches(str(value), choices, n=1, cutoff=0.4)
            hint = f"; did you mean {close[0]}?" if close else ""
            self.fail(f"{value!r} is not one of {', '.join(choices)}{hint}", param, ctx)


class Commands(click.Group):
    """The command group: a bad option value is one line on stderr (exit 2), without the usage text."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.BadParameter as error:
            raise InputError(error.format_message()) from None


def _settings() -> Settings:
    try:
        return Settings.from_env()
    except SettingsError as error:
        raise InputError(str(error)) from None


def _print_seed(report: object) -> None:
    from api.storage.catalog_repository import SeedReport

    assert isinstance(report, SeedReport)
    changes = ", ".join(
        f"{table}: +{report.inserted.get(table, 0)} ~{report.updated.get(table, 0)}" for table in report.inserted
    )
    click.echo(f"seeded catalog {report.version} ({changes})")
    if report.kept:
        click.echo(f"kept as administrators left them: {', '.join(report.kept)}")


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


@click.group(cls=Commands)
def main() -> None:
    """gpu-advisor: GPU pricing and recommendations for AI workloads."""


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535), help="Port to listen on.")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64), help="Worker processes.")
@click.option("--migrate/--no-migrate", default=None, help="Apply migrations and seed first [default: on].")
def serve(host: str, port: int, workers: int, migrate: bool | None) -> None:
    """Run the HTTP service (SQLite file and in-process cache when nothing is configured)."""
    from api.server import run as run_server
    from api.storage.bootstrap import migrate_and_seed

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


@main.command()
def migrate() -> None:
    """Apply database migrations up to the newest."""
    from api.storage.migrate import upgrade

    settings = _settings()
    with _waiting("applying migrations"):
        upgrade(settings.database_url)
    click.echo("database at the newest migration")


@main.command()
def seed() -> None:
    """Load the shipped reference catalog into the database (idempotent; changed prices get a history row)."""
    from api.storage.bootstrap import seed_database

    url = _settings().database_url
    with _waiting("seeding the catalog from the reference data"):
        report = asyncio.run(seed_database(url))
    _print_seed(report)


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
@click.option("--vendor", type=OneOf(VENDORS), help="Only this vendor.")
@click.option(
    "--sort",
    type=OneOf(["name", "memory", "bandwidth", "bf16", "price"]),
    default="name",
    show_default=True,
)
def gpus(vendor: str | None, sort: str) -> None:
    """Print the GPU catalog as a table."""
    from rich.table import Table

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
    console().print(table)


# Offers: the listing, import and export


def _given(ctx: click.Context) -> list[str]:
    """The options of a command that were set on the command line or from the environment."""
    from click.core import ParameterSource

    return [
        param.opts[0]
        for param in ctx.command.params
        if param.name is not None and ctx.get_parameter_source(param.name) not in (ParameterSource.DEFAULT, None)
    ]


@main.group(invoke_without_command=True)
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
    from api.catalog_view import NotInCatalog, find_gpu, find_provider, offer_list

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
    from api.cli_tables import offers_view

    show(offers_view(page, values["lang"]), wide=values["wide"])


@prices.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_json_option
def prices_import(file: Path, as_json: bool) -> None:
    """Create or update offers from a CSV or JSON file, all or nothing; progress goes to stderr."""
    import msgspec
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from api.catalog_sync import announce
    from api.offer_import import Row, RowErrors, csv_rows, json_rows, parse_rows
    from api.schemas import OfferBulkRead
    from api.storage.database import create_engine, create_session_factory
    from api.storage.offer_repository import WriteReport, write_offers
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
    from api.offer_import import offers_csv

    click.echo(offers_csv(_load_catalog().offers), nl=False)


def _load_view() -> CatalogView:
    """The catalog the service would serve now: the database's, else the shipped reference data."""
    from api.services import Services

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
        text = str(error)
        found = _AT_FIELD.search(text)
        message = re.sub(r"^Expected `\w+`,? (?:that's )?", "must be ", text.split(" - at `$")[0])
        if found is None:
            raise InputError(message) from None
        raise _rejected(found.group(1), message, renames or {}) from None


# Workloads


def _custom_model(value: str) -> dict[str, Any]:
    """A custom model from inline JSON or a JSON file."""
    path = Path(value)
    try:
        document = json.loads(path.read_text(encoding="utf-8") if path.is_file() else value)
    except (OSError, ValueError) as error:
        raise InputError(f"--custom-model: neither a JSON object nor a readable JSON file ({error})") from None
    if not isinstance(document, dict):
        raise InputError('--custom-model: expected a JSON object such as {"params_b": 8, "layers": 32, ...}')
    return document


_WORKLOAD_OPTIONS: list[tuple[str, dict[str, Any]]] = [
    (
        "--kind",
        {
            "type": OneOf(["inference", "training", "fine_tuning", "image_generation"]),
            "default": "inference",
            "show_default": True,
            "help": "Workload kind.",
        },
    ),
    ("--model", {"help": "Catalog model id or alias (e.g. llama-3.1-70b, deepseek-r1, sdxl)."}),
    (
        "--custom-model",
        {
            "help": "A language model outside the catalog: JSON object or JSON file with its config figures "
            "(params_b, layers, hidden_size, attention_heads, kv_heads, ...); instead of --model."
        },
    ),
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
    ("--optimizer", {"type": OneOf(["adamw", "adamw_8bit"]), "help": "Optimizer (training, fine-tuning)."}),
    ("--target-days", {"type": float, "help": "Finish a training run within this many days."}),
    ("--target-hours", {"type": float, "help": "Finish a fine-tuning run within this many hours."}),
    ("--method", {"type": OneOf(["full", "lora", "qlora"]), "help": "Fine-tuning method."}),
    ("--lora-rank", {"type": int, "help": "LoRA rank."}),
    ("--images-per-hour", {"type": float, "help": "Images per hour to sustain (image generation)."}),
    ("--width", {"type": int, "help": "Image width."}),
    ("--height", {"type": int, "help": "Image height."}),
    ("--steps", {"type": int, "help": "Denoising steps."}),
]
_FIELDS = {
    "inference": [
        "model",
        "custom_model",
        "precision",
        "kv_cache_precision",
        "input_tokens",
        "output_tokens",
        "concurrency",
        "requests_per_second",
        "max_ttft_ms",
        "max_tpot_ms",
    ],
    "training": ["model", "custom_model", "precision", "train_tokens", "sequence_length", "optimizer", "target_days"],
    "fine_tuning": [
        "model",
        "custom_model",
        "precision",
        "train_tokens",
        "sequence_length",
        "optimizer",
        "method",
        "lora_rank",
        "target_hours",
    ],
    "image_generation": ["model", "precision", "width", "height", "steps", "images_per_hour"],
}
_ALL_FIELDS = {field for fields in _FIELDS.values() for field in fields}


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
        raise InputError(f"{', '.join(unused)} do not apply to --kind {kind}")
    workload = {"kind": kind} | {k: values[k] for k in _FIELDS[kind] if values.get(k) is not None}
    if "custom_model" in workload:
        workload["custom_model"] = _custom_model(workload["custom_model"])
    return workload


@main.command()
@_workload_options
@click.option("--gpus", type=CommaList(), help="Only these GPUs (ids or aliases).")
@click.option("--exclude-gpus", type=CommaList(), help="Never these GPUs (ids or aliases).")
@click.option("--vendors", type=CommaList(VENDORS), help="Only these vendors.")
@click.option("--ecosystems", type=CommaList(ECOSYSTEMS), help="Only these software stacks.")
@click.option("--providers", type=CommaList(), help="Only offers of these providers (ids).")
@click.option("--pricing", type=CommaList(PRICING), help="Allowed pricing models [default: on_demand].")
@click.option("--count", "gpu_count", type=int, help="Only configurations of exactly this many GPUs.")
@click.option("--max-gpus", type=int, help="Largest GPU count to consider [default: 64].")
@click.option("--max-nodes", type=int, help="Most machines one configuration may span [default: 8].")
@click.option("--single-node", is_flag=True, default=None, help="Only configurations within one machine.")
@click.option("--allow-unpriced", is_flag=True, default=None, help="Also rank GPUs nobody in the catalog rents.")
@click.option("--max-usd-per-hour", type=float, help="Budget per hour.")
@click.option("--objective", type=OneOf(["balanced", "cost", "speed"]), default="balanced", show_default=True)
@click.option("--currency", type=OneOf(["USD", "CNY"]), default="USD", show_default=True)
@click.option("--limit", type=click.IntRange(1, 50), default=10, show_default=True, help="Options to rank.")
@_lang_option
@_json_option
@_wide_option
def recommend(**values: Any) -> None:
    """Rank GPU options for a workload: table of options, excluded GPUs, summary and assumptions."""
    from domain.planning import RecommendationRequest
    from domain.planning import recommend as rank

    constraints = {
        key: values[key]
        for key in (
            "gpus",
            "exclude_gpus",
            "vendors",
            "ecosystems",
            "providers",
            "pricing",
            "gpu_count",
            "max_gpus",
            "max_nodes",
            "single_node",
            "max_usd_per_hour",
        )
        if values[key] is not None
    }
    if values["allow_unpriced"]:
        constraints["require_offer"] = False
    renames = {"gpu_count": "--count", "require_offer": "--allow-unpriced"}
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
        renames,
    )
    settings = _settings()
    catalog = _load_catalog()
    try:
        result = rank(catalog, request, now=datetime.now(UTC), lang=values["lang"], rate=settings.exchange_rate())
    except WorkloadError as error:
        raise _rejected(error.field, error.message, renames) from None
    if values["as_json"]:
        _print_json(result)
        return
    from api.cli_tables import recommendation_view

    show(recommendation_view(result, values["lang"]), wide=values["wide"])


@main.command()
@_workload_options
@click.option("--gpu", required=True, help="GPU id or alias.")
@click.option("--count", "gpu_count", type=int, required=True, help="Number of GPUs.")
@click.option("--provider", help="Price with this provider's offers.")
@click.option("--pricing", "--pricing-model", "pricing", type=OneOf(PRICING), help="Price with this model.")
@click.option("--currency", type=OneOf(["USD", "CNY"]), default="USD", show_default=True)
@_lang_option
@_json_option
@_wide_option
def estimate(**values: Any) -> None:
    """Estimate a workload on one explicit configuration (a configuration that cannot run it says why)."""
    from domain.planning import EstimateRequest
    from domain.planning import estimate as run_estimate

    renames = {"gpu_count": "--count"}
    document = {
        "workload": _workload(values),
        "gpu": values["gpu"],
        "gpu_count": values["gpu_count"],
        "currency": values["currency"],
        "lang": values["lang"],
    } | {key: values[key] for key in ("provider", "pricing") if values.get(key)}
    request = _decode(document, EstimateRequest, renames)
    settings = _settings()
    try:
        option = run_estimate(
            _load_catalog(), request, now=datetime.now(UTC), lang=values["lang"], rate=settings.exchange_rate()
        )
    except WorkloadError as error:
        raise _rejected(error.field, error.message, renames) from None
    if values["as_json"]:
        _print_json(option)
        return
    from api.cli_tables import estimate_view

    show(estimate_view(option, values["lang"]), wide=values["wide"])


@main.command()
@click.argument("gpus", nargs=-1, required=True, metavar="GPU GPU [GPU...]")
@_lang_option
@_json_option
@_wide_option
def compare(gpus: tuple[str, ...], lang: Lang, as_json: bool, wide: bool) -> None:
    """Compare 2 to 8 GPUs (ids or aliases) side by side, with ratios to the first one."""
    from api.catalog_view import NotInCatalog, comparison_read, find_gpus
    from api.routes.catalog import MAX_COMPARE

    names = [part.strip() for argument in gpus for part in argument.split(",") if part.strip()]
    if not 2 <= len(names) <= MAX_COMPARE:
        raise InputError(f"compare takes 2 to {MAX_COMPARE} GPUs, got {len(names)}")
    view = _load_view()
    try:
        chosen = find_gpus(view.catalog, names)
    except NotInCatalog as missing:
        raise InputError(str(missing)) from None
    comparison = comparison_read(view, chosen, lang)
    if as_json:
        _print_json(comparison)
        return
    from api.cli_tables import comparison_view

    show(comparison_view(comparison, comparison.lang), wide=wide)


@main.command()
@click.option("--gpu", help="GPU id or alias (or --system).")
@click.option("--system", help="8-GPU server id or alias, e.g. dgx-h100 (or --gpu).")
@click.option("--count", "gpu_count", type=int, help="GPUs bought or rented [default: the system's, else 8].")
@click.option("--years", type=int, help="Years compared, 1-6 [default: 3].")
@click.option("--utilization", type=float, help="Share of the hours the GPUs work, 0.001-1 [default: 0.6].")
@click.option(
    "--electricity",
    "--electricity-usd-per-kwh",
    "electricity_usd_per_kwh",
    type=float,
    help="Electricity in USD per kWh [default: 0.10].",
)
@click.option("--pue", type=float, help="Power usage effectiveness, 1-3 [default: 1.4].")
@click.option("--operations-usd-per-year", type=float, help="Support, staff, space [default: 10% of the purchase].")
@click.option("--purchase-usd", type=float, help="USD for all the GPUs with their servers [default: catalog price].")
@click.option("--resale-fraction", type=float, help="Resale value / purchase, 0-0.9 [default: 0.2].")
@click.option("--cost-of-capital", type=float, help="Annual rate on the capital, 0-0.5 [default: 0.08].")
@click.option("--pricing", type=CommaList(PRICING), help="Pricing models to rent with [default: all but blocks].")
@click.option("--providers", type=CommaList(), help="Only offers of these providers (ids).")
@click.option("--currency", type=OneOf(["USD", "CNY"]), default="USD", show_default=True)
@_lang_option
@_json_option
@_wide_option
def tco(**values: Any) -> None:
    """Buy or rent: owning GPUs year by year against renting them per pricing model, with break-even."""
    from domain.tco import TcoRequest
    from domain.tco import tco as compare_costs

    if (values["gpu"] is None) == (values["system"] is None):
        raise InputError("give --gpu (a GPU id or alias) or --system (a server id), not both")
    renames = {"gpu_count": "--count", "electricity_usd_per_kwh": "--electricity"}
    fields = [name for name in TcoRequest.__struct_fields__ if name not in ("lang",)]
    document = {name: values[name] for name in fields if values.get(name) is not None} | {"lang": values["lang"]}
    request = _decode(document, TcoRequest, renames)
    settings = _settings()
    try:
        answer = compare_costs(
            _load_catalog(),
            request,
            today=datetime.now(UTC).date(),
            lang=values["lang"],
            rate=settings.exchange_rate(),
        )
    except WorkloadError as error:
        raise _rejected(error.field, error.message, renames) from None
    if values["as_json"]:
        _print_json(answer)
        return
    from api.cli_tables import tco_view

    show(tco_view(answer, values["lang"]), wide=values["wide"])


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


main.add_command(models)
prices.add_command(sync)

if __name__ == "__main__":
    main()
