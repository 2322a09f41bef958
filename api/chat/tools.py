"""The chatbot tools: one definition per tool serves the MCP server and the function-calling manifest."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

import msgspec

from api.chat.tool_fields import describe_fields
from api.schemas.allowed_values import allowed_values, teach
from api.schemas.json_numbers import convert_with_integral_floats
from api.schemas.problems import field_in_message, plain_message
from api.schemas.storable_text import MESSAGE, unstorable_field
from api.services.catalog_view import (
    CatalogView,
    NotInCatalog,
    comparison_read,
    find_gpu,
    find_gpus,
    find_provider,
    offer_list,
)
from api.services.recommendations import rank_request
from domain.catalog import DiffusionModel, LlmModel, Pricing
from domain.narrative.summaries import estimate_summary, offers_summary
from domain.planning import EstimateRequest, RecommendationRequest, estimate
from domain.pricing.costs import DEFAULT_PRICE_MAX_AGE_DAYS
from domain.pricing.tco import tco
from domain.pricing.tco_schema import TcoRequest
from domain.workloads.requests import Lang, workload_kind
from domain.workloads.resolve import WorkloadError
from domain.workloads.results import ExchangeRate, Recommendation

MAX_COMPARE = 4


class ToolError(Exception):
    """Arguments the tool cannot use; the message says what to change."""


class CompareInput(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """GPUs to put side by side."""

    ids: Annotated[
        list[Annotated[str, msgspec.Meta(min_length=1, max_length=100)]],
        msgspec.Meta(
            min_length=2,
            max_length=MAX_COMPARE,
            description="2 to 4 GPU ids or names (e.g. 'h100-sxm', 'H200', 'MI300X'); the first is the baseline.",
        ),
    ]
    lang: Annotated[Lang | None, msgspec.Meta(description="Answer language: en or zh. Default en.")] = None


class PriceQuery(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Which rental offers to find."""

    gpu: Annotated[str, msgspec.Meta(max_length=200, description="GPU id or name, e.g. 'h100-sxm'.")] | None = None
    provider: Annotated[str, msgspec.Meta(max_length=64, description="Provider id, e.g. 'runpod'.")] | None = None
    pricing: Annotated[
        Pricing | None, msgspec.Meta(description="on_demand, reserved_1y, reserved_3y, spot or capacity_block.")
    ] = None
    max_usd_per_gpu_hour: (
        Annotated[float, msgspec.Meta(gt=0, le=10_000, description="Price ceiling, USD per GPU per hour.")] | None
    ) = None
    max_age_days: (
        Annotated[int, msgspec.Meta(ge=0, le=100_000, description="Only prices seen at most this many days ago.")]
        | None
    ) = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=50, description="Most offers to return, cheapest first.")] = 10
    lang: Annotated[Lang | None, msgspec.Meta(description="Answer language: en or zh. Default en.")] = None


class ModelQuery(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Which catalog models to list."""

    kind: Annotated[
        Literal["llm", "diffusion"] | None,
        msgspec.Meta(description="Only language models (llm) or image diffusion pipelines (diffusion)."),
    ] = None
    family: (
        Annotated[str, msgspec.Meta(min_length=1, max_length=64, description="Only this family, e.g. 'qwen', 'llama'.")]
        | None
    ) = None
    lang: Annotated[Lang | None, msgspec.Meta(description="Answer language: en or zh. Default en.")] = None


class ModelEntry(msgspec.Struct, kw_only=True):
    """One model as list_models shows it."""

    id: str
    name: str
    kind: Literal["llm", "diffusion"]
    family: str
    params_b: float
    active_params_b: float | None


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What a tool call may use: the catalog snapshot, the exchange rate, the time, and where to keep results."""

    view: CatalogView
    rate: ExchangeRate
    now: datetime
    # Stores a recommendation so its id can be shared (a portal link); absent where nothing is stored.
    keep: Callable[[Recommendation, RecommendationRequest], Awaitable[None]] | None = None
    # Prices older than this are old enough for a summary to say so (GPU_ADVISOR_PRICE_MAX_AGE_DAYS).
    price_max_age_days: int = DEFAULT_PRICE_MAX_AGE_DAYS


@dataclass(frozen=True, slots=True)
class ToolAnswer:
    """What a tool returns: a summary to say, in the asked language, and the structured data."""

    summary: str
    data: Any


@dataclass(frozen=True, slots=True)
class Tool:
    """One tool: its name, a description for a language model, its input type and how to run it."""

    name: str
    title: str
    description: str
    input_type: type[msgspec.Struct]
    method: Literal["GET", "POST"]
    path: str
    run: Callable[[ToolContext, Any], Awaitable[ToolAnswer]]

    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of the arguments, self-contained (no $ref), as function-calling APIs want it."""
        return describe_fields(_inline(msgspec.json.schema(self.input_type)))

    def decode(self, arguments: dict[str, Any] | None) -> Any:
        """Arguments as the input type; ToolError naming the field otherwise."""
        if (field := unstorable_field(arguments or {})) is not None:
            raise ToolError(f"Invalid {field}: {MESSAGE}")
        try:
            return convert_with_integral_floats(arguments or {}, self.input_type)
        except msgspec.ValidationError as error:
            text = str(error)
            field = field_in_message(text)
            if field is not None:
                message, _ = teach(plain_message(text), allowed_values(self.input_type, field, arguments or {}))
                raise ToolError(f"Invalid {field}: {message}") from None
            raise ToolError(f"Invalid arguments: {error}") from None


def _inline(schema: dict[str, Any]) -> dict[str, Any]:
    definitions = schema.get("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return resolve(definitions[node["$ref"].rsplit("/", 1)[-1]])
            return {key: resolve(value) for key, value in node.items() if key != "$defs"}
        if isinstance(node, list):
            return [resolve(item) for item in node]
        return node

    resolved: dict[str, Any] = resolve(schema)
    return resolved


def _builtins(value: Any) -> Any:
    return msgspec.to_builtins(value)


async def _recommend(context: ToolContext, request: RecommendationRequest) -> ToolAnswer:
    prepared, result = rank_request(
        context.view.catalog,
        request,
        request.lang or "en",
        now=context.now,
        rate=context.rate,
        price_max_age_days=context.price_max_age_days,
    )
    if context.keep is not None:
        await context.keep(result, prepared.request)
    return ToolAnswer(result.summary, _builtins(result))


async def _estimate(context: ToolContext, request: EstimateRequest) -> ToolAnswer:
    lang = request.lang or "en"
    option = estimate(
        context.view.catalog,
        request,
        now=context.now,
        lang=lang,
        rate=context.rate,
        price_max_age_days=context.price_max_age_days,
    )
    summary = estimate_summary(workload_kind(request.workload), option, lang, context.view.catalog)
    return ToolAnswer(summary, _builtins(option))


async def _compare(context: ToolContext, query: CompareInput) -> ToolAnswer:
    gpus = find_gpus(context.view.catalog, query.ids)
    if len(gpus) < 2:
        raise ToolError("Invalid ids: they name fewer than 2 different GPUs")
    comparison = comparison_read(context.view, gpus, query.lang or "en")
    return ToolAnswer(comparison.summary, _builtins(comparison))


async def _prices(context: ToolContext, query: PriceQuery) -> ToolAnswer:
    catalog = context.view.catalog
    found = offer_list(
        catalog,
        context.now.date(),
        gpu_id=find_gpu(catalog, query.gpu).id if query.gpu is not None else None,
        provider=find_provider(catalog, query.provider) if query.provider is not None else None,
        pricing=query.pricing,
        max_usd_per_gpu_hour=query.max_usd_per_gpu_hour,
        max_age_days=query.max_age_days,
        sort="price",
        limit=query.limit,
    )
    cheapest = next((offer for offer in catalog.offers if found.items and offer.id == found.items[0].id), None)
    lang = query.lang or "en"
    summary = offers_summary(catalog, found.total, cheapest, lang, context.now.date(), context.price_max_age_days)
    return ToolAnswer(summary, _builtins(found))


_MODELS_SUMMARY = {
    "en": "{count} models: {ids}. Use an id as workload.model.",
    "zh": "共 {count} 个模型：{ids}。将 id 用作 workload.model。",
}


async def _models(context: ToolContext, query: ModelQuery) -> ToolAnswer:
    entries = [
        ModelEntry(
            id=model.id,
            name=model.name,
            kind="llm" if isinstance(model, LlmModel) else "diffusion",
            family=model.family,
            params_b=model.params_b if isinstance(model, LlmModel) else _pipeline_params_b(model),
            active_params_b=model.active_params_b if isinstance(model, LlmModel) else None,
        )
        for model in context.view.catalog.models
        if (query.kind is None or isinstance(model, LlmModel) == (query.kind == "llm"))
        and (query.family is None or model.family == query.family.lower())
    ]
    lang = query.lang or "en"
    summary = _MODELS_SUMMARY[lang].format(count=len(entries), ids=", ".join(entry.id for entry in entries) or "-")
    return ToolAnswer(summary, {"items": _builtins(entries), "total": len(entries)})


def _pipeline_params_b(model: DiffusionModel) -> float:
    """A diffusion pipeline's parameters: denoiser, text encoders and VAE."""
    return round(model.denoiser.params_b + sum(e.params_b for e in model.text_encoders) + model.vae_params_b, 3)


async def _rent_or_buy(context: ToolContext, request: TcoRequest) -> ToolAnswer:
    result = tco(context.view.catalog, request, today=context.now.date(), lang=request.lang or "en", rate=context.rate)
    return ToolAnswer(result.summary, _builtins(result))


_UNITS = (
    "Units: memory in GB, prices in USD (or CNY with currency 'CNY'), times in ms/hours/days as the field names say, "
    "tokens as counts. Every result has `summary` (say it to the user) and the full structured answer."
)

TOOLS: tuple[Tool, ...] = (
    Tool(
        name="recommend_gpus",
        title="Recommend GPUs for a workload",
        description=(
            "Rank GPU options for an AI workload: which GPUs fit, how fast, what they cost (per hour, per month, per "
            "million tokens, per training run or per 1000 images) and why. Call it when someone asks which GPU or "
            "server to buy or rent for serving an LLM (workload.kind 'inference': model id such as 'deepseek-r1' "
            "or 'llama-3.1-70b', concurrency = simultaneous users), pre-training ('training': tokens), fine-tuning "
            "('fine_tuning': method lora/qlora/full, tokens) or image generation ('image_generation': model 'sdxl', "
            "images_per_hour). Optional constraints: vendors, max_gpus, max_usd_per_hour, pricing; objective "
            "balanced (default), cost or speed. GPUs that cannot be used are listed in `excluded` with the reason. "
            + _UNITS
        ),
        input_type=RecommendationRequest,
        method="POST",
        path="/v1/recommendations",
        run=_recommend,
    ),
    Tool(
        name="estimate_workload",
        title="Estimate one GPU configuration",
        description=(
            "Estimate one given configuration (gpu id and gpu_count) for a workload: does it fit in memory, "
            "throughput or run time, and cost. Call it for 'can I run X on N of GPU Y?' or 'how fast is Y for X?'. "
            "The workload has the same shape as in recommend_gpus. " + _UNITS
        ),
        input_type=EstimateRequest,
        method="POST",
        path="/v1/estimates",
        run=_estimate,
    ),
    Tool(
        name="compare_gpus",
        title="Compare GPUs",
        description=(
            "Put 2 to 4 GPUs side by side: memory (GB), memory bandwidth (GB/s), dense BF16/FP8 TFLOPS (datasheet "
            "dense figures, never sparse), power (W), cheapest on-demand price per GPU-hour, and ratios to the "
            "first GPU. Call it for 'H100 or H200?', 'MI300X vs H100'."
        ),
        input_type=CompareInput,
        method="GET",
        path="/v1/gpus/compare",
        run=_compare,
    ),
    Tool(
        name="find_gpu_prices",
        title="Find GPU rental prices",
        description=(
            "Find dated rental offers (provider, GPU, pricing model, USD per GPU-hour, as_of date, source), "
            "cheapest first. Call it for 'how much does an H100 cost per hour?' or 'cheapest spot A100'. All filters "
            "are optional; prices carry the date they were seen (age_days)."
        ),
        input_type=PriceQuery,
        method="GET",
        path="/v1/offers",
        run=_prices,
    ),
    Tool(
        name="rent_or_buy",
        title="Rent or buy: total cost of ownership",
        description=(
            "Compare buying GPUs (or a server such as 'dgx-h100') with renting them over 1 to 6 years: purchase, "
            "financing, power, facility, operations and resale against the cheapest rental per pricing model, the "
            "break-even utilization and which is cheaper. Call it for 'should we buy 8 H100s or rent them?'. "
            "Defaults (stated in `assumptions`): 3 years, utilization 0.6, electricity 0.10 USD/kWh, PUE 1.4. " + _UNITS
        ),
        input_type=TcoRequest,
        method="POST",
        path="/v1/tco",
        run=_rent_or_buy,
    ),
    Tool(
        name="list_models",
        title="List the models gpu-advisor can size",
        description=(
            "List the catalog's workload models: id, name, kind (llm or diffusion), family and parameters in "
            "billions (total, and active per token for mixture-of-experts models). Call it to find the id to pass "
            "as workload.model (e.g. 'which Qwen models do you know?'), or filter by kind or family."
        ),
        input_type=ModelQuery,
        method="GET",
        path="/v1/models",
        run=_models,
    ),
)

TOOLS_BY_NAME = {tool.name: tool for tool in TOOLS}


async def call_tool(name: str, arguments: dict[str, Any] | None, context: ToolContext) -> ToolAnswer:
    """Run a tool; ToolError for an unknown tool or arguments it cannot use."""
    tool = TOOLS_BY_NAME.get(name)
    if tool is None:
        raise ToolError(f"No tool {name!r}; tools: {', '.join(TOOLS_BY_NAME)}")
    try:
        return await tool.run(context, tool.decode(arguments))
    except WorkloadError as error:
        raise ToolError(f"Invalid {error.field}: {error.message}") from None
    except NotInCatalog as error:
        raise ToolError(str(error)) from None
