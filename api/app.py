"""The application factory: create_app(settings) builds the app without I/O; connections open in its lifespan."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from litestar import Litestar
from litestar.config.cors import CORSConfig
from litestar.datastructures import State
from litestar.di import Provide
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import ScalarRenderPlugin
from litestar.openapi.spec import Server, Tag
from litestar.plugins.prometheus import PrometheusConfig

from api.problems import EXCEPTION_HANDLERS
from api.routes import catalog, estimates, health, recommendations
from api.services import Services
from api.settings import Settings

API_VERSION = "1.0.0"

DESCRIPTION = """\
gpu-advisor answers "which GPUs should we buy or rent for this AI workload, and what will it cost?".

The catalog holds GPUs with dense datasheet figures (never 2:4-sparse marketing figures), 8-GPU servers, providers,
dated rental offers and workload model architectures. Every record names its source; every price carries `as_of`.
Errors are RFC 9457 `application/problem+json` documents with `errors` naming each bad field.
Catalog reads carry an ETag and Cache-Control and answer 304 to a matching If-None-Match.
"""


def _services(state: State) -> Services:
    services: Services = state.services
    return services


def create_app(settings: Settings) -> Litestar:
    """Build the application; nothing connects until the lifespan starts."""

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        services = await Services.start(settings)
        app.state.services = services
        try:
            yield
        finally:
            await services.close()

    prometheus = PrometheusConfig(app_name="gpu_advisor", prefix="gpu_advisor", group_path=True, exclude=["/metrics"])
    return Litestar(
        route_handlers=[*catalog.ROUTES, *estimates.ROUTES, *recommendations.ROUTES, *health.ROUTES],
        dependencies={"services": Provide(_services, sync_to_thread=False)},
        lifespan=[lifespan],
        exception_handlers=EXCEPTION_HANDLERS,
        middleware=[prometheus.middleware],
        cors_config=CORSConfig(allow_origins=list(settings.cors_origins)) if settings.cors_origins else None,
        openapi_config=OpenAPIConfig(
            title="gpu-advisor",
            version=API_VERSION,
            description=DESCRIPTION,
            path="/schema",
            render_plugins=[ScalarRenderPlugin()],
            use_handler_docstrings=False,
            servers=[Server(url="/", description="This instance")],
            tags=[
                Tag(name="catalog", description="GPUs, servers, providers, offers and workload models (read-only)."),
                Tag(
                    name="recommendations",
                    description="Workload sizing: ranked GPU options, single-configuration estimates.",
                ),
                Tag(name="operations", description="Health probes and metrics."),
            ],
        ),
        debug=False,
    )


def create_app_from_env() -> Litestar:
    """Factory for ASGI servers started with several workers: each worker reads the environment once."""
    settings = Settings.from_env()
    logging.basicConfig(level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    return create_app(settings)
