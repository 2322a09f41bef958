"""Questions from a terminal: recommend, estimate, compare and rent or buy."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from api.cli.tables import show
from domain.workloads.requests import Lang
from domain.workloads.resolve import WorkloadError

if TYPE_CHECKING:
    pass
from api.cli.common import (
    ECOSYSTEMS,
    PRICING,
    VENDORS,
    CommaList,
    InputError,
    OneOf,
    _decode,
    _json_option,
    _lang_option,
    _load_catalog,
    _load_view,
    _print_json,
    _rejected,
    _settings,
    _wide_option,
)


def _custom_model(value: str) -> dict[str, Any]:
    """A custom model from inline JSON or a JSON file."""
    path = Path(value)
    # Inline JSON is no file name (and may be longer than a file name may be).
    is_file = not value.lstrip().startswith("{") and path.is_file()
    try:
        document = json.loads(path.read_text(encoding="utf-8-sig") if is_file else value)
    except (OSError, ValueError) as error:
        raise InputError(f"--custom-model: neither a JSON object nor a readable JSON file ({error})") from None
    if not isinstance(document, dict):
        raise InputError('--custom-model: expected a JSON object such as {"params_b": 8, "layers": 32, ...}')
    if _is_hf_config(document):
        # A config.json as Hugging Face ships it: the request carries it whole, under its repository's name.
        named = document.get("_name_or_path")
        name = named if isinstance(named, str) and named.strip() else (path.stem if is_file else "")
        if is_file and path.stem == "config":
            name = name if named else path.resolve().parent.name
        return {"hf_config": document} | ({"name": name[:100]} if name else {})
    return document


def _is_hf_config(document: dict[str, Any]) -> bool:
    """A config.json rather than the request's own figures: it has keys every config.json has and no request does."""
    from domain.workloads.requests import CustomModel

    config_only = {"model_type", "architectures", "num_hidden_layers", "text_config"}
    config_only -= set(CustomModel.__struct_fields__)
    return "hf_config" not in document and bool(config_only & document.keys())


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
            "help": "A language model outside the catalog, instead of --model: its Hugging Face config.json as it "
            "is (a file or inline JSON), or a JSON object of figures (params_b, layers, hidden_size, ...)."
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
    (
        "--use-case",
        {
            "type": OneOf(["chat", "agent", "batch"]),
            "help": "Inference: chat (default; TPOT <= 100 ms, TTFT <= 2,000 ms unless --max-tpot-ms/--max-ttft-ms "
            "say otherwise), agent (TTFT <= 5,000 ms) or batch (no latency targets).",
        },
    ),
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
        "use_case",
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


@click.command()
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
    from api.services.recommendations import rank_request
    from domain.planning import RecommendationRequest

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
        _, result = rank_request(catalog, request, values["lang"], now=datetime.now(UTC), rate=settings.exchange_rate())
    except WorkloadError as error:
        raise _rejected(error.field, error.message, renames) from None
    if values["as_json"]:
        _print_json(result)
        return
    from api.cli.tables import recommendation_view

    show(recommendation_view(result, values["lang"]), wide=values["wide"])


@click.command()
@_workload_options
@click.option("--gpu", required=True, help="GPU id or alias.")
@click.option("--count", "gpu_count", type=int, required=True, help="Number of GPUs.")
@click.option("--provider", help="Price with this provider's offers.")
@click.option(
    "--pricing",
    "--pricing-model",
    "pricing",
    type=OneOf(PRICING),
    help=f"Price with this model: {', '.join(PRICING)}.",
)
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
    from api.cli.tables import estimate_view

    show(estimate_view(option, values["lang"]), wide=values["wide"])


@click.command()
@click.argument("gpus", nargs=-1, required=True, metavar="GPU GPU [GPU...]")
@_lang_option
@_json_option
@_wide_option
def compare(gpus: tuple[str, ...], lang: Lang, as_json: bool, wide: bool) -> None:
    """Compare 2 to 8 GPUs (ids or aliases) side by side, with ratios to the first one."""
    from api.routes.gpus import MAX_COMPARE
    from api.services.catalog_view import NotInCatalog, comparison_read, find_gpus

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
    from api.cli.catalog_tables import comparison_view

    show(comparison_view(comparison, comparison.lang), wide=wide)


@click.command()
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
    from domain.pricing.tco import tco as compare_costs
    from domain.pricing.tco_schema import TcoRequest

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
    from api.cli.tco_tables import tco_view

    show(tco_view(answer, values["lang"]), wide=values["wide"])
