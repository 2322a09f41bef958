"""One workload on one explicit configuration."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from litestar import Request, post
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Example
from litestar.params import Body

from api.http.language import resolve_lang
from api.http.problems import problem_responses
from api.http.request_body import BODY_OPT, strict_body
from api.http.request_context import scope_header
from api.openapi import example_responses, examples
from api.wiring import Services
from domain.planning import EstimateRequest, estimate
from domain.workloads.results import Option


@post(
    "/v1/estimates",
    operation_id="createEstimate",
    opt={BODY_OPT: EstimateRequest},
    summary="Estimate a workload on one configuration",
    description=(
        "Answer 'can this run on N x GPU, how fast, at what cost?' for one explicit configuration (`gpu`, "
        "`gpu_count`, optionally `provider` and `pricing`). A configuration that cannot run the workload is not an "
        "error: it answers 200 with `feasible: false` and the reason (and the smallest configuration that would run "
        "it). Figures are {expected, low, high} with a confidence label and the assumptions used."
    ),
    tags=["recommendations"],
    status_code=200,
    responses={
        200: ResponseSpec(
            Option,
            generate_examples=False,
            description="The configuration's estimate.",
            examples=[Example(summary=s, value=v) for s, v in example_responses.ESTIMATES.items()],
        ),
    }
    | problem_responses(400, 413),
)
async def create_estimate(
    request: Request[Any, Any, Any],
    services: NamedDependency[Services],
    data: Annotated[
        EstimateRequest,
        Body(
            description="The workload and the configuration to estimate.",
            examples=[Example(summary=s, value=v) for s, v in examples.ESTIMATE_REQUESTS.items()],
        ),
    ],
) -> Option:
    data = await strict_body(request, EstimateRequest)
    lang = resolve_lang(data.lang, scope_header(request.scope, b"accept-language"))
    return estimate(
        services.view.catalog,
        data,
        now=datetime.now(UTC),
        lang=lang,
        rate=services.exchange_rate,
        price_max_age_days=services.settings.price_max_age_days,
    )


ROUTES = [create_estimate]
