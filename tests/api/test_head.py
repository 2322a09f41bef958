"""HEAD on every GET route: the GET's status and headers, no body (so `curl -I` reads an ETag)."""

from __future__ import annotations

import re

from litestar import Litestar
from litestar.handlers import HTTPRouteHandler
from litestar.testing import AsyncTestClient

from api.routes.schema_ui import SWAGGER_UI_VERSION

Client = AsyncTestClient[Litestar]

# A value for each path parameter, so every route is asked for something that exists.
PARAMETERS = {
    "gpu_id": "h100-sxm",
    "model_id": "llama-3.1-70b",
    "system_id": "dgx-h100",
    "recommendation_id": "rec_0000000000000000",
    "provider_id": "coreweave",
    "name": "app.js",
    "path": "openapi.json",
    "version": SWAGGER_UI_VERSION,
}
# Headers that legitimately differ between two answers to the same question.
PER_ANSWER = {"x-request-id", "date"}


def get_paths(app: Litestar, offer_id: str) -> list[str]:
    """Every GET route of the app, its parameters filled in."""
    values = {**PARAMETERS, "offer_id": offer_id}
    paths = set()
    for route in app.routes:
        for handler in getattr(route, "route_handlers", ()):
            if isinstance(handler, HTTPRouteHandler) and "GET" in handler.http_methods:
                paths.add(route.path)
    return sorted(re.sub(r"\{(\w+):\w+\}", lambda m: values[m.group(1)], path) for path in paths)


async def test_every_get_route_answers_head_like_get(app: Litestar, client: Client) -> None:
    offer_id = (await client.get("/v1/offers?limit=1")).json()["items"][0]["id"]
    paths = get_paths(app, offer_id)
    assert "/v1/gpus" in paths and "/ui" in paths and len(paths) > 10
    for path in paths:
        got = await client.get(path)
        head = await client.head(path)
        assert head.status_code == got.status_code, (path, head.status_code, got.status_code)
        assert head.content == b"", path
        # The metrics count this very request, so their length moves between two asks.
        ignored = PER_ANSWER | ({"content-length"} if path == "/metrics" else set())
        same = {k: v for k, v in got.headers.items() if k not in ignored}
        assert {k: v for k, v in head.headers.items() if k not in ignored} == same, path


async def test_head_reads_the_etag_and_revalidates(client: Client) -> None:
    head = await client.head("/v1/gpus/h100-sxm")
    assert head.status_code == 200 and head.headers["etag"]
    again = await client.head("/v1/gpus/h100-sxm", headers={"If-None-Match": head.headers["etag"]})
    assert again.status_code == 304 and again.content == b""


async def test_head_on_a_post_only_route_is_405_listing_the_methods(client: Client) -> None:
    response = await client.head("/v1/recommendations")
    assert response.status_code == 405 and response.content == b""


async def test_options_lists_head_beside_get(client: Client) -> None:
    response = await client.options("/v1/gpus")
    assert "HEAD" in [m.strip() for m in response.headers["allow"].split(",")]
