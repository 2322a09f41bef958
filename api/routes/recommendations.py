"""Ranked recommendations: computed once per normalised request and catalog version, stored, cached."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Annotated, Any

import msgspec
from litestar import Request, get, post
from litestar.datastructures import ResponseHeader
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Example
from litestar.params import Body, Parameter

from api import example_responses, examples
from api.http.json_response import EncodedJSON
from api.http.patterns import END
from api.http.problems import ProblemError, not_found, problem_responses
from api.http.request_body import BODY_OPT, strict_body
from api.http.request_context import scope_header
from api.language import resolve_lang
from api.recommendation_store import saved_recommendation
from api.services import Services, services_of
from api.storage.database import DATABASE_ERRORS
from domain.planning import RecommendationRequest, prepare, rank, recommendation_id
from domain.workloads.results import Recommendation

log = logging.getLogger(__name__)

AnyRequest = Request[Any, Any, Any]
ID_PATTERN = r"^rec_[0-9a-f]{24}" + END
STORED_HEADER = "X-Recommendation-Stored"
_encoder = msgspec.json.Encoder()


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
    view = services.view
    prepared = prepare(view.catalog, data, lang)
    rate = services.exchange_rate
    now = datetime.now(UTC)
    rate_used = rate if prepared.request.currency == "CNY" else None
    rec_id = recommendation_id(prepared.request, view.version, rate_used, now.date())
    headers = {"Location": f"/v1/recommendations/{rec_id}"}
    body = await services.cache.get(f"rec:{rec_id}")
    if body is None:
        # Computed first and looked up only when the id turns out to be stored already: a new id (the common
        # case on a miss) costs one write and no read.
        result = rank(
            view.catalog, prepared, now=now, rate=rate, price_max_age_days=services.settings.price_max_age_days
        )
        body = _encoder.encode(result)
        outcome = await services.recommendations.save(saved_recommendation(result, prepared.request, body))
        if outcome == "existing":
            stored = await _find(services, rec_id)
            if stored is not None:
                body = _encoder.encode(stored)
        elif outcome != "stored":
            headers[STORED_HEADER] = "pending" if outcome == "pending" else "false"
        if outcome in ("stored", "existing"):
            # Only what the database acknowledged is cached: a cached id outlives this process, a waiting one may not.
            await services.cache.set(f"rec:{rec_id}", body, services.settings.cache_ttl_s)
    return EncodedJSON(body, headers)


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
    services = services_of(request)
    body = await services.cache.get(f"rec:{recommendation_id}")
    if body is None:
        try:
            stored = await services.recommendations.load(recommendation_id)
        except DATABASE_ERRORS as error:
            log.warning("could not read recommendation %s: %s", recommendation_id, error)
            raise ProblemError(
                503, "Stored recommendations are unavailable right now.", headers={"Retry-After": "5"}
            ) from None
        if stored is None:
            raise not_found("recommendation", recommendation_id, [])
        body = _encoder.encode(stored)
        if not services.recommendations.waiting(recommendation_id):
            await services.cache.set(f"rec:{recommendation_id}", body, services.settings.cache_ttl_s)
    return EncodedJSON(body)


async def _find(services: Services, rec_id: str) -> Any:
    try:
        return await services.recommendations.load(rec_id)
    except DATABASE_ERRORS as error:
        log.warning("could not look up recommendation %s: %s", rec_id, error)
        return None


ROUTES = [create_recommendation, get_recommendation]
