"""GPU reads: the list with filters and sorting, one GPU, and GPUs compared side by side."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from litestar import Response, get
from litestar.di import NamedDependency
from litestar.openapi.spec import Example
from litestar.params import Parameter

from api.http.caching import cached_read
from api.http.language import resolve_lang
from api.http.problems import not_found, problem_responses
from api.http.request_context import scope_header
from api.openapi import examples
from api.routes.reads import AnyRequest, LangQuery, Limit, Offset, Order, ok
from api.schemas import (
    GpuComparisonRead,
    GpuList,
    GpuRead,
)
from api.schemas.patterns import ECMA_SPACE_CLASS
from api.services.catalog_view import (
    CatalogView,
    NotInCatalog,
    comparison_read,
    find_gpus,
)
from api.wiring import Services
from domain.catalog import Ecosystem, Gpu, Vendor
from domain.pricing.compare import half_precision_tflops

MAX_COMPARE = 8
_SPACE = f"[{ECMA_SPACE_CLASS}]"
_ITEM = f"{_SPACE}*[^,{ECMA_SPACE_CLASS}][^,]*"
IDS_PATTERN = rf"^{_ITEM}(,{_ITEM}){{1,{MAX_COMPARE - 1}}}$"


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
    responses=ok(
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
    responses=ok(GpuRead, "The GPU.", examples.GPU, "NVIDIA H100 SXM5") | problem_responses(400, 404),
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
    return await cached_read(request, services, lambda view: view.gpus[gpu.id], reads="gpu_offers", gpu=gpu.id)


ROUTES = [list_gpus, compare_gpus_route, get_gpu]
