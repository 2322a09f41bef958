"""Catalog reads: GPUs, comparison, systems, providers, offers, workload models."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from litestar import Request, Response, get
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Example
from litestar.params import Parameter

from api import examples
from api.catalog_view import (
    CatalogView,
    NotInCatalog,
    comparison_read,
    find_gpu,
    find_gpus,
    find_provider,
    offer_list,
)
from api.http.caching import cached_read
from api.http.patterns import ECMA_SPACE_CLASS
from api.http.problems import not_found, problem_responses
from api.http.request_context import scope_header
from api.language import resolve_lang
from api.schemas import (
    DiffusionModelRead,
    GpuComparisonRead,
    GpuList,
    GpuRead,
    Lang,
    LlmModelRead,
    ModelList,
    ModelRead,
    OfferList,
    ProviderList,
    SystemList,
    SystemRead,
)
from api.services import Services
from domain.catalog import Ecosystem, Gpu, Pricing, Vendor
from domain.pricing.compare import half_precision_tflops

AnyRequest = Request[Any, Any, Any]
Limit = Annotated[int, Parameter(ge=1, le=200, description="Page size (1-200).", examples=[Example(value=50)])]
Offset = Annotated[int, Parameter(ge=0, le=100_000, description="Items to skip.", examples=[Example(value=0)])]
Order = Annotated[
    Literal["asc", "desc"] | None,
    Parameter(description="Sort direction; default ascending for names and prices, descending for figures."),
]
LangQuery = Annotated[
    Lang | None, Parameter(description="Answer language; default from Accept-Language, else English.")
]

MAX_COMPARE = 8
_SPACE = f"[{ECMA_SPACE_CLASS}]"
_ITEM = f"{_SPACE}*[^,{ECMA_SPACE_CLASS}][^,]*"
IDS_PATTERN = rf"^{_ITEM}(,{_ITEM}){{1,{MAX_COMPARE - 1}}}$"


def _ok(model: Any, description: str, example: Any, summary: str) -> dict[int, ResponseSpec]:
    return {
        200: ResponseSpec(
            data_container=model,
            generate_examples=False,
            description=description,
            examples=[Example(summary=summary, value=example)],
        )
    }


def _gpu_sort_key(view: CatalogView, sort: str) -> Any:
    catalog = view.catalog

    def on_demand_price(gpu: Gpu) -> float | None:
        offer = catalog.lowest_prices(gpu.id).get("on_demand")
        return offer.usd_per_gpu_hour if offer else None

    figures = {
        "memory_gb": lambda gpu: gpu.memory_gb,
        "bandwidth": lambda gpu: gpu.memory_bandwidth_gbps,
        "bf16_tflops": half_precision_tflops,
        "price": on_demand_price,
    }
    return figures.get(sort)


@get(
    "/v1/gpus",
    operation_id="listGpus",
    summary="List GPUs with dense datasheet figures and lowest prices",
    description=(
        "Every accelerator in the catalog (datacenter, workstation and China-market SKUs) with dense tensor "
        "figures (never 2:4-sparse marketing figures), memory, interconnect, ecosystem, sources and the lowest "
        "known price per pricing model. Filter by vendor, minimum memory, ecosystem or feature; sort by name, "
        "memory, bandwidth, BF16 compute or on-demand price. Call this to shortlist GPUs by hard requirements."
    ),
    tags=["catalog"],
    responses=_ok(
        GpuList,
        "A page of GPUs.",
        {"items": [examples.GPU], "total": 1, "limit": 50, "offset": 0},
        "GPUs with at least 80 GB that support FP8",
    )
    | problem_responses(400),
)
async def list_gpus(
    request: AnyRequest,
    services: NamedDependency[Services],
    vendor: Annotated[
        Vendor | None, Parameter(description="Only this vendor.", examples=[Example(value="nvidia")])
    ] = None,
    min_memory_gb: Annotated[
        float | None,
        Parameter(
            ge=0,
            le=100_000,
            description="Minimum memory per GPU in GB.",
            examples=[Example(value=80)],
            # Litestar drops a zero lower bound from optional numbers; state it so clients see it.
            schema_extra={"minimum": 0},
        ),
    ] = None,
    ecosystem: Annotated[Ecosystem | None, Parameter(description="Software stack: cuda, rocm, gaudi or cann.")] = None,
    supports: Annotated[
        Literal["fp8", "fp4", "nvlink"] | None,
        Parameter(
            description="Only GPUs with this feature (nvlink includes NVSwitch and NVLink bridges).",
            examples=[Example(value="fp8")],
        ),
    ] = None,
    segment: Annotated[
        Literal["datacenter", "workstation", "consumer"] | None, Parameter(description="Market segment.")
    ] = None,
    sort: Annotated[
        Literal["name", "memory_gb", "bandwidth", "bf16_tflops", "price"],
        Parameter(description="Sort field; price is the lowest on-demand price per GPU-hour (unpriced GPUs last)."),
    ] = "name",
    order: Order = None,
    limit: Limit = 50,
    offset: Offset = 0,
) -> Response[GpuList]:
    def build(view: CatalogView) -> GpuList:
        gpus = [
            gpu
            for gpu in view.catalog.gpus
            if (vendor is None or gpu.vendor == vendor)
            and (min_memory_gb is None or gpu.memory_gb >= min_memory_gb)
            and (ecosystem is None or gpu.ecosystem == ecosystem)
            and (segment is None or gpu.segment == segment)
            and (
                supports is None
                or (supports == "fp8" and gpu.supports_fp8)
                or (supports == "fp4" and gpu.supports_fp4)
                or (supports == "nvlink" and gpu.has_nvlink)
            )
        ]
        figure = _gpu_sort_key(view, sort)
        if figure is None:
            gpus.sort(key=lambda gpu: (gpu.name.casefold(), gpu.id), reverse=order == "desc")
        else:
            descending = order == "desc" if order else sort != "price"
            known = sorted((g for g in gpus if figure(g) is not None), key=lambda g: (figure(g), g.id))
            if descending:
                known.sort(key=lambda g: figure(g), reverse=True)
            gpus = known + [g for g in gpus if figure(g) is None]
        page = gpus[offset : offset + limit]
        return GpuList(items=[view.gpus[g.id] for g in page], total=len(gpus), limit=limit, offset=offset)

    return await cached_read(request, services, build)


@get(
    "/v1/gpus/compare",
    operation_id="compareGpus",
    summary="Compare GPUs side by side",
    description=(
        "Two to eight GPUs (ids or aliases, comma-separated) side by side, with each GPU's memory, bandwidth, "
        "dense BF16 and FP8 compute, power and on-demand price as ratios to the first GPU, and a short summary "
        "sentence in English or Chinese. Call this when a user weighs specific GPUs against each other."
    ),
    tags=["catalog"],
    responses=problem_responses(400, 404),
)
async def compare_gpus_route(
    request: AnyRequest,
    services: NamedDependency[Services],
    ids: Annotated[
        str,
        Parameter(
            description=(
                f"2 to {MAX_COMPARE} comma-separated GPU ids or aliases; the first is the baseline of the ratios. "
                "Names of the same GPU are merged."
            ),
            min_length=3,
            max_length=400,
            pattern=IDS_PATTERN,
            examples=[Example(summary="H100 vs H200 vs MI300X", value="h100-sxm,h200,mi300x")],
        ),
    ],
    lang: LangQuery = None,
) -> Response[GpuComparisonRead]:
    answer_lang = resolve_lang(lang, scope_header(request.scope, b"accept-language"))
    try:
        gpus = find_gpus(services.view.catalog, ids.split(","))
    except NotInCatalog as missing:
        raise not_found(missing.kind, missing.name, missing.suggestions) from None

    def build(view: CatalogView) -> GpuComparisonRead:
        return comparison_read(view, gpus, answer_lang)

    return await cached_read(request, services, build, key_extra=answer_lang, vary="Accept-Language")


@get(
    "/v1/gpus/{gpu_id:str}",
    operation_id="getGpu",
    summary="Get one GPU",
    description=(
        "One GPU by id or alias (`h100-sxm`, `H100`, `H100 SXM5` and `NVIDIA H100` all name the H100 SXM5) with "
        "dense datasheet figures, sources, confidence and its lowest price per pricing model. An unknown name "
        "answers 404 with the closest ids."
    ),
    tags=["catalog"],
    responses=_ok(GpuRead, "The GPU.", examples.GPU, "NVIDIA H100 SXM5") | problem_responses(400, 404),
)
async def get_gpu(
    request: AnyRequest,
    services: NamedDependency[Services],
    gpu_id: Annotated[
        str,
        Parameter(description="GPU id or alias.", max_length=200, examples=[Example(value="h100-sxm")]),
    ],
) -> Response[GpuRead]:
    catalog = services.view.catalog
    gpu = catalog.gpu(gpu_id)
    if gpu is None:
        raise not_found("GPU", gpu_id, catalog.suggest("gpu", gpu_id))
    return await cached_read(request, services, lambda view: view.gpus[gpu.id])


@get(
    "/v1/systems",
    operation_id="listSystems",
    summary="List 8-GPU servers",
    description=(
        "8-accelerator servers (DGX H100/H200/B200, HGX H100, AMD MI300X platform, Intel Gaudi 2/3 kits) with total "
        "accelerator memory, power, fabric, network and purchase price (basis, date and source) where known."
    ),
    tags=["catalog"],
    responses=_ok(SystemList, "Every system.", {"items": [examples.SYSTEM], "total": 1}, "DGX H100"),
)
async def list_systems(request: AnyRequest, services: NamedDependency[Services]) -> Response[SystemList]:
    def build(view: CatalogView) -> SystemList:
        return SystemList(items=list(view.systems.values()), total=len(view.systems))

    return await cached_read(request, services, build)


@get(
    "/v1/systems/{system_id:str}",
    operation_id="getSystem",
    summary="Get one 8-GPU server",
    description="One server by id or alias (`dgx-h100`, `DGX H100`); an unknown name answers 404 with the closest ids.",
    tags=["catalog"],
    responses=_ok(SystemRead, "The system.", examples.SYSTEM, "DGX H100") | problem_responses(400, 404),
)
async def get_system(
    request: AnyRequest,
    services: NamedDependency[Services],
    system_id: Annotated[
        str, Parameter(description="System id or alias.", max_length=200, examples=[Example(value="dgx-h100")])
    ],
) -> Response[SystemRead]:
    catalog = services.view.catalog
    system = catalog.system(system_id)
    if system is None:
        raise not_found("system", system_id, catalog.suggest("system", system_id))
    return await cached_read(request, services, lambda view: view.systems[system.id])


@get(
    "/v1/providers",
    operation_id="listProviders",
    summary="List GPU cloud providers",
    description="Every provider with offers in the catalog, its kind, where its prices came from and its offer count.",
    tags=["catalog"],
    responses=_ok(ProviderList, "Every provider.", {"items": [examples.PROVIDER], "total": 1}, "DigitalOcean"),
)
async def list_providers(request: AnyRequest, services: NamedDependency[Services]) -> Response[ProviderList]:
    def build(view: CatalogView) -> ProviderList:
        return ProviderList(items=list(view.providers.values()), total=len(view.providers))

    return await cached_read(request, services, build)


@get(
    "/v1/offers",
    operation_id="listOffers",
    summary="List rental offers with dated, sourced prices",
    description=(
        "GPU rental offers: provider, GPU, GPUs per instance, pricing model, USD per GPU-hour, vCPUs and RAM per GPU "
        "where published, the date the price was seen (`as_of`) and its source. Filter by GPU (id or alias), "
        "provider, pricing model or a price ceiling; sort by price (cheapest first), GPU, provider or date."
    ),
    tags=["catalog"],
    responses=_ok(
        OfferList,
        "A page of offers.",
        {"items": [examples.OFFER], "total": 1, "limit": 50, "offset": 0},
        "H100 on demand",
    )
    | problem_responses(400, 404),
)
async def list_offers(
    request: AnyRequest,
    services: NamedDependency[Services],
    gpu: Annotated[
        str | None, Parameter(description="GPU id or alias.", max_length=200, examples=[Example(value="h100-sxm")])
    ] = None,
    provider: Annotated[
        str | None, Parameter(description="Provider id.", max_length=64, examples=[Example(value="digitalocean")])
    ] = None,
    pricing: Annotated[
        Pricing | None, Parameter(description="Pricing model.", examples=[Example(value="on_demand")])
    ] = None,
    max_usd_per_gpu_hour: Annotated[
        float | None,
        Parameter(
            gt=0,
            le=10_000,
            description="Price ceiling in USD per GPU-hour.",
            examples=[Example(value=3.5)],
            schema_extra={"exclusiveMinimum": 0},
        ),
    ] = None,
    max_age_days: Annotated[
        int | None,
        Parameter(
            ge=0,
            le=100_000,
            description="Only prices seen at most this many days ago.",
            examples=[Example(value=180)],
            schema_extra={"minimum": 0},
        ),
    ] = None,
    sort: Annotated[
        Literal["price", "gpu", "provider", "as_of"], Parameter(description="Sort field; as_of sorts newest first.")
    ] = "price",
    order: Order = None,
    limit: Limit = 50,
    offset: Offset = 0,
) -> Response[OfferList]:
    catalog = services.view.catalog
    today = datetime.now(UTC).date()
    try:
        gpu_id = find_gpu(catalog, gpu).id if gpu is not None else None
        if provider is not None:
            find_provider(catalog, provider)
    except NotInCatalog as missing:
        raise not_found(missing.kind, missing.name, missing.suggestions) from None

    def build(view: CatalogView) -> OfferList:
        return offer_list(
            view.catalog,
            today,
            gpu_id=gpu_id,
            provider=provider,
            pricing=pricing,
            max_usd_per_gpu_hour=max_usd_per_gpu_hour,
            max_age_days=max_age_days,
            sort=sort,
            order=order,
            limit=limit,
            offset=offset,
        )

    # Ages change at midnight, so the day is part of what the cached body depends on.
    return await cached_read(request, services, build, key_extra=today.isoformat())


@get(
    "/v1/models",
    operation_id="listModels",
    summary="List workload models (LLMs and diffusion pipelines)",
    description=(
        "The models gpu-advisor can size: LLMs with their architecture (layers, heads, KV heads, MoE and MLA "
        "layout) and image diffusion pipelines (denoiser, text encoders, VAE, steps), each from its config.json "
        "or paper. Use an `id` (or alias such as `deepseek-ai/DeepSeek-R1`) in estimates and recommendations."
    ),
    tags=["catalog"],
    responses=_ok(
        ModelList, "Every model.", {"items": [examples.LLM, examples.DIFFUSION], "total": 2}, "DeepSeek-R1 and SDXL"
    )
    | problem_responses(400),
)
async def list_models(
    request: AnyRequest,
    services: NamedDependency[Services],
    kind: Annotated[
        Literal["llm", "diffusion"] | None, Parameter(description="Only this kind.", examples=[Example(value="llm")])
    ] = None,
    family: Annotated[
        str | None,
        Parameter(
            description="Only this family (e.g. qwen, llama, deepseek).",
            max_length=64,
            examples=[Example(value="qwen")],
        ),
    ] = None,
) -> Response[ModelList]:
    def build(view: CatalogView) -> ModelList:
        wanted = {"llm": LlmModelRead, "diffusion": DiffusionModelRead}.get(kind or "", object)
        items = [
            model
            for model in view.models.values()
            if isinstance(model, wanted) and (family is None or model.family == family.lower())
        ]
        return ModelList(items=items, total=len(items))

    return await cached_read(request, services, build)


@get(
    "/v1/models/{model_id:path}",
    operation_id="getModel",
    summary="Get one workload model",
    description=(
        "One model by id or alias, e.g. `deepseek-r1`, `DeepSeek-R1`, `deepseek-ai/DeepSeek-R1` or `sdxl`; "
        "an unknown name answers 404 with the closest ids."
    ),
    tags=["catalog"],
    responses=_ok(ModelRead, "The model.", examples.LLM, "DeepSeek-R1") | problem_responses(400, 404),
)
async def get_model(
    request: AnyRequest,
    services: NamedDependency[Services],
    model_id: Annotated[
        str,
        Parameter(
            description="Model id or alias; aliases may contain '/' (e.g. deepseek-ai/DeepSeek-R1).",
            examples=[Example(value="deepseek-r1")],
        ),
    ],
) -> Response[ModelRead]:
    name = model_id.removeprefix("/")
    catalog = services.view.catalog
    model = catalog.model(name)
    if model is None:
        raise not_found("model", name, catalog.suggest("model", name))
    return await cached_read(request, services, lambda view: view.models[model.id])


ROUTES = [
    list_gpus,
    compare_gpus_route,
    get_gpu,
    list_systems,
    get_system,
    list_providers,
    list_offers,
    list_models,
    get_model,
]
