"""Catalog reads: systems, providers, offers, workload models (GPUs are in gpus.py)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Literal

from litestar import Response, get
from litestar.di import NamedDependency
from litestar.openapi.spec import Example
from litestar.params import Parameter

from api.http.caching import cached_read
from api.http.problems import not_found, problem_responses
from api.openapi import examples
from api.routes.reads import AnyRequest, Limit, Offset, Order, ok
from api.schemas import (
    DiffusionModelRead,
    LlmModelRead,
    ModelList,
    ModelRead,
    OfferList,
    ProviderList,
    SystemList,
    SystemRead,
)
from api.services.catalog_view import (
    CatalogView,
    NotInCatalog,
    find_gpu,
    find_provider,
    offer_list,
)
from api.wiring import Services
from domain.catalog import Pricing


@get(
    "/v1/systems",
    operation_id="listSystems",
    summary="List 8-GPU servers",
    description=(
        "8-accelerator servers (DGX H100/H200/B200, HGX H100, AMD MI300X platform, Intel Gaudi 2/3 kits) with total "
        "accelerator memory, power, fabric, network and purchase price (basis, date and source) where known."
    ),
    tags=["catalog"],
    responses=ok(SystemList, "Every system.", {"items": [examples.SYSTEM], "total": 1}, "DGX H100"),
)
async def list_systems(request: AnyRequest, services: NamedDependency[Services]) -> Response[SystemList]:
    def build(view: CatalogView) -> SystemList:
        return SystemList(items=list(view.systems.values()), total=len(view.systems))

    return await cached_read(request, services, build, reads="structure")


@get(
    "/v1/systems/{system_id:str}",
    operation_id="getSystem",
    summary="Get one 8-GPU server",
    description="One server by id or alias (`dgx-h100`, `DGX H100`); an unknown name answers 404 with the closest ids.",
    tags=["catalog"],
    responses=ok(SystemRead, "The system.", examples.SYSTEM, "DGX H100") | problem_responses(400, 404),
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
    return await cached_read(request, services, lambda view: view.systems[system.id], reads="structure")


@get(
    "/v1/providers",
    operation_id="listProviders",
    summary="List GPU cloud providers",
    description="Every provider with offers in the catalog, its kind, where its prices came from and its offer count.",
    tags=["catalog"],
    responses=ok(ProviderList, "Every provider.", {"items": [examples.PROVIDER], "total": 1}, "DigitalOcean"),
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
    responses=ok(
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
    responses=ok(
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

    return await cached_read(request, services, build, reads="structure")


@get(
    "/v1/models/{model_id:path}",
    operation_id="getModel",
    summary="Get one workload model",
    description=(
        "One model by id or alias, e.g. `deepseek-r1`, `DeepSeek-R1`, `deepseek-ai/DeepSeek-R1` or `sdxl`; "
        "an unknown name answers 404 with the closest ids."
    ),
    tags=["catalog"],
    responses=ok(ModelRead, "The model.", examples.LLM, "DeepSeek-R1") | problem_responses(400, 404),
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
    return await cached_read(request, services, lambda view: view.models[model.id], reads="structure")


ROUTES = [
    list_systems,
    get_system,
    list_providers,
    list_offers,
    list_models,
    get_model,
]
