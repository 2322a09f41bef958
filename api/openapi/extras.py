"""What the route decorators cannot say in the OpenAPI document: links between operations, the rate limit's 429."""

from __future__ import annotations

from litestar.openapi.spec import (
    Example,
    Link,
    OpenAPI,
    OpenAPIHeader,
    OpenAPIMediaType,
    OpenAPIResponse,
    OpenAPIType,
    Reference,
    Schema,
)

from api.http.problems import PROBLEM_MEDIA_TYPE, problem_responses
from api.http.rate_limit import RateLimitMiddleware

_LINKS = {
    ("/v1/recommendations", "post", "200"): {
        "GetRecommendation": Link(
            operation_id="getRecommendation",
            parameters={"recommendation_id": "$response.body#/id"},
            description="The stored recommendation: the `id` returned here, from any instance, after restarts.",
        )
    }
}


def _rate_limited(path: str) -> bool:
    return not path.startswith(RateLimitMiddleware.UNLIMITED)


def complete_openapi(openapi: OpenAPI) -> None:
    """Declare the links and document 429 on every rate-limited operation."""
    spec = problem_responses(429)[429]
    too_many = OpenAPIResponse(
        description=spec.description or "",
        headers={
            "Retry-After": OpenAPIHeader(
                schema=Schema(type=OpenAPIType.INTEGER),
                description="Seconds to wait before the next request.",
                required=True,
            )
        },
        content={
            PROBLEM_MEDIA_TYPE: OpenAPIMediaType(
                schema=Reference(ref="#/components/schemas/Problem"),
                examples={"rate-limited": Example(summary="Too Many Requests", value=spec.examples[0].value)}
                if spec.examples
                else None,
            )
        },
    )
    for path, item in (openapi.paths or {}).items():
        for method in ("get", "put", "post", "delete"):
            operation = getattr(item, method)
            if operation is None or operation.responses is None:
                continue
            response = operation.responses.get("200")
            links = _LINKS.get((path, method, "200"))
            if links and isinstance(response, OpenAPIResponse):
                response.links = dict(links)
            if _rate_limited(path):
                operation.responses["429"] = too_many
