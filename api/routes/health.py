"""Liveness, readiness and Prometheus metrics."""

from __future__ import annotations

import os
from typing import Literal

from litestar import Response, get
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Example
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest, multiprocess

from api.schemas import LiveRead, ReadyRead
from api.wiring import Services

# Litestar appends the charset to text/* media types itself; the client library's constant already has one.
METRICS_MEDIA_TYPE = CONTENT_TYPE_LATEST.removesuffix("; charset=utf-8")

_READY_EXAMPLE = {
    "status": "degraded",
    "database": "ok",
    "redis": "degraded",
    "catalog_version": "3f2a9c0d1b7e4a55",
    "catalog_source": "database",
    "catalog_loaded_at": "2026-11-29T19:00:00Z",
    "recommendations": "ok",
    "pending_recommendations": 0,
}


@get(
    "/health/live",
    operation_id="getLiveness",
    summary="Liveness probe",
    description="Answers 200 while the process runs; it checks nothing else. Use it for restart decisions.",
    tags=["operations"],
    responses={
        200: ResponseSpec(
            LiveRead, generate_examples=False, description="Alive.", examples=[Example(value={"status": "ok"})]
        )
    },
)
async def live() -> LiveRead:
    return LiveRead(status="ok")


@get(
    "/health/ready",
    operation_id="getReadiness",
    summary="Readiness probe",
    description=(
        "200 when the database answers (status `ok`, or `degraded` when Redis is down or the catalog came from the "
        "shipped reference data instead of the database); 503 when the database is unreachable. Redis is only a "
        "cache: `redis` is `ok`, `degraded` (unreachable; requests are answered without it) or `local` "
        "(no REDIS_URL: in-process cache). `recommendations` is `pending` while answered recommendations wait to be "
        "stored and `stalled` (503) when that queue has not shrunk for a while although the database answers."
    ),
    tags=["operations"],
    responses={
        200: ResponseSpec(
            ReadyRead, generate_examples=False, description="Ready.", examples=[Example(value=_READY_EXAMPLE)]
        ),
        503: ResponseSpec(
            ReadyRead,
            generate_examples=False,
            description=(
                "The database is unreachable, or recommendations wait and are not being stored; reads still answer "
                "from the in-memory catalog."
            ),
            examples=[Example(value=_READY_EXAMPLE | {"status": "unavailable", "database": "unavailable"})],
        ),
    },
)
async def ready(services: NamedDependency[Services]) -> Response[ReadyRead]:
    database_ok = await services.database_ok()
    redis = await services.cache.health()
    view = services.view
    store = services.recommendations.health()
    status: Literal["ok", "degraded", "unavailable"]
    if not database_ok or store == "stalled":
        status = "unavailable"
    elif redis == "degraded" or view.source != "database" or store == "pending":
        status = "degraded"
    else:
        status = "ok"
    body = ReadyRead(
        status=status,
        database="ok" if database_ok else "unavailable",
        redis=redis,
        catalog_version=view.version,
        catalog_source=view.source,
        catalog_loaded_at=view.loaded_at,
        recommendations=store,
        pending_recommendations=services.recommendations.pending,
    )
    return Response(body, status_code=200 if status != "unavailable" else 503, headers={"Cache-Control": "no-store"})


@get(
    "/metrics",
    operation_id="getMetrics",
    summary="Prometheus metrics",
    description=(
        "Request counts and latency histograms per route, cache hits and misses, the catalog version and reload "
        "count, in the Prometheus text format."
    ),
    tags=["operations"],
    media_type=METRICS_MEDIA_TYPE,
    responses={
        200: ResponseSpec(
            str,
            generate_examples=False,
            description="Prometheus text exposition.",
            media_type=METRICS_MEDIA_TYPE,
            examples=[Example(value="gpu_advisor_catalog_reloads_total 1.0\n")],
        )
    },
)
async def metrics() -> Response[bytes]:
    registry = REGISTRY
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        # Several workers: each writes its own files and the scrape merges them.
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    return Response(generate_latest(registry), media_type=METRICS_MEDIA_TYPE, headers={"Cache-Control": "no-store"})


ROUTES = [live, ready, metrics]
