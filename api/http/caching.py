"""Catalog reads: ETag and Cache-Control, 304 on If-None-Match, bodies cached by the part of the catalog they read."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import msgspec
from litestar import Request, Response

from api.http.query_params import canonical_query
from api.http.request_context import varies_on
from api.services.catalog_view import CatalogView
from api.wiring import Services
from domain.catalog import Reads

_encoder = msgspec.json.Encoder()


def _matches(if_none_match: str | None, etag: str) -> bool:
    if not if_none_match:
        return False
    candidates = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
    return "*" in candidates or etag in candidates


async def cached_read(
    request: Request[Any, Any, Any],
    services: Services,
    build: Callable[[CatalogView], msgspec.Struct],
    *,
    key_extra: str = "",
    vary: str | None = None,
    reads: Reads = "all",
    gpu: str | None = None,
) -> Response[Any]:
    """Answer a catalog read from the cache, building and caching the body on a miss.

    The body depends only on the part of the catalog `build` reads (`reads`, and `gpu` for one GPU's offers), the
    path, the parameters the handler reads and `key_extra` (the answer language, the day), so the key and the ETag
    are derived from those without building the body: a price change leaves the models, the systems and the other
    GPUs' answers cached, and their ETags valid. `vary` names the request header the body depends on, for shared
    caches.
    """
    view = services.view
    query = urlencode(canonical_query(request))
    key = f"catalog:{view.catalog.derived_key(reads, gpu)}:{request.url.path}?{query}#{key_extra}"
    etag = '"' + hashlib.blake2b(key.encode(), digest_size=12).hexdigest() + '"'
    headers = {"ETag": etag, "Cache-Control": f"public, max-age={services.settings.catalog_max_age_s}"}
    if vary:
        headers["Vary"] = vary
        varies_on(vary)
    if _matches(request.headers.get("if-none-match"), etag):
        return Response(content=b"", status_code=304, headers=headers)
    body = await services.cache.get(key)
    if body is None:
        body = _encoder.encode(build(view))
        await services.cache.set(key, body, services.settings.cache_ttl_s)
    return Response(content=body, media_type="application/json", headers=headers)
