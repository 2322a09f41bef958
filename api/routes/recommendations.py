"""Ranked recommendations: computed once per normalised request and catalog version, stored, cached."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from litestar import Request, get, post
from litestar.datastructures import ResponseHeader
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Example
from litestar.params import Body, Parameter

from api.http.json_response import EncodedJSON
from api.http.language import resolve_lang
from api.http.problems import not_found, problem_responses
from api.http.request_body import BODY_OPT, strict_body
from api.http.request_context import scope_header
from api.openapi import example_responses, examples
from api.schemas.patterns import END
from api.schemas.problems import ProblemError
from api.services.recommendations import StoreUnavailable, stored_recommendation
from api.services.recommendations import create_recommendation as create
from api.wiring import services_of
from domain.planning import RecommendationRequest
from domain.workloads.results import Recommendation

AnyRequest = Request[Any, Any, Any]
ID_PATTERN = r"^rec_[0-9a-f]{24}" + END
STORED_HEADER = "X-Recommendation-Stored"


def _examples(kind_examples: dict[str, dict[str, Any]]) -> list[Example]:
    return [Example(summary=summary, value=value) for summary, value in kind_examples.items()]


@post(
    "/v1/recommendations",
    operation_id="createRecommendation",
    opt={BODY_OPT: RecommendationRequest},
    summary="Rank GPU options for a workload",
    description=(
        "Describe a workload (`kind`: inference, training, fine_tuning or image_generation) and get GPU options "
        "ranked by `objective` (balanced, cost or speed): for each GPU the smallest configuration that fits and meets "
        "the targets, the cheapest matching rental offer, costs (per hour, per month, per million output tokens, per "
        "run or per 1000 images), memory, performance as {expected, low, high} with a confidence label, the "
        "assumptions, reasons and warnings. GPUs that cannot be options are listed in `excluded` with the reason. "
        "`summary` is two or three sentences to say to a person, in `lang` (or Accept-Language). The id is "
        "content-addressed: the same request on the same catalog gives the same id, retrievable with "
        "getRecommendation from any instance. Unknown model names answer 400 with the closest ids."
    ),
    tags=["recommendations"],
    status_code=200,
    response_headers=[
        ResponseHeader(
            name="Location",
            documentation_only=True,
            description="Where getRecommendation serves this recommendation.",
        ),
        ResponseHeader(
            name=STORED_HEADER,
            documentation_only=True,
            description=(
                "Absent when the recommendation is stored. `pending`: the database is unavailable; this instance "
                "holds it and stores it as soon as the database is back (getRecommendation on this instance serves "
                "it meanwhile). `false`: it could not be stored or queued; the answer itself is complete."
            ),
        ),
    ],
    responses={
        200: ResponseSpec(
            Recommendation,
            generate_examples=False,
            description="Ranked options (one example per workload kind; `excluded` shortened).",
            examples=_examples(example_responses.RECOMMENDATIONS),
        ),
    }
    | problem_responses(400, 413),
)
async def create_recommendation(
    request: AnyRequest,
    data: Annotated[
        RecommendationRequest,
        Body(description="The workload, constraints and ranking objective.", examples=_examples(examples.REQUESTS)),
    ],
) -> EncodedJSON:
    services = services_of(request)
    data = await strict_body(request, RecommendationRequest)
    lang = resolve_lang(data.lang, scope_header(request.scope, b"accept-language"))
    created = await create(services, data, lang, datetime.now(UTC))
    headers = {"Location": f"/v1/recommendations/{created.id}"}
    if created.outcome is not None and created.outcome not in ("stored", "existing"):
        headers[STORED_HEADER] = "pending" if created.outcome == "pending" else "false"
    return EncodedJSON(created.body, headers)


@get(
    "/v1/recommendations/{recommendation_id:str}",
    operation_id="getRecommendation",
    summary="Get a stored recommendation",
    description=(
        "A recommendation by the id createRecommendation returned, from any instance and after restarts. "
        "An unknown id answers 404."
    ),
    tags=["recommendations"],
    responses={
        200: ResponseSpec(
            Recommendation,
            generate_examples=False,
            description="The stored recommendation.",
            examples=_examples(dict(list(example_responses.RECOMMENDATIONS.items())[:1])),
        ),
    }
    | problem_responses(400, 404, 503),
)
async def get_recommendation(
    request: AnyRequest,
    recommendation_id: Annotated[
        str,
        Parameter(
            description="The id createRecommendation returned.",
            pattern=ID_PATTERN,
            examples=[Example(value=example_responses.FIRST_ID)],
        ),
    ],
) -> EncodedJSON:
    try:
        body = await stored_recommendation(services_of(request), recommendation_id)
    except StoreUnavailable:
        raise ProblemError(
            503, "Stored recommendations are unavailable right now.", headers={"Retry-After": "5"}
        ) from None
    if body is None:
        raise not_found("recommendation", recommendation_id, [])
    return EncodedJSON(body)


ROUTES = [create_recommendation, get_recommendation]
