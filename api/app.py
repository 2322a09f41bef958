"""The application factory: create_app(settings) builds the app without I/O; connections open in its lifespan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from litestar import Litestar, Request, Router
from litestar.config.cors import CORSConfig
from litestar.datastructures import MutableScopeHeaders, State
from litestar.di import Provide
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import Components, SecurityScheme, Server, Tag
from litestar.plugins.prometheus import PrometheusConfig
from litestar.types import Message, Scope

from api.chat.mcp_server import build_server, http_session_manager, service_context
from api.http.auth import API_KEY_HEADER
from api.http.client_address import ClientAddress, TrustedProxies, trusted_networks
from api.http.head_requests import HeadAsGet
from api.http.problems import EXCEPTION_HANDLERS
from api.http.query_params import check_query
from api.http.rate_limit import RateLimiter, RateLimitMiddleware
from api.http.read_deadline import EXCEPTION_HANDLERS as BODY_EXCEPTION_HANDLERS
from api.http.read_deadline import BodyDeadline
from api.http.request_body import BODY_OPT, check_body
from api.http.request_context import REQUEST_ID_HEADER, RequestContext
from api.logs import configure_logging
from api.openapi.constraints import restore_constraints
from api.openapi.extras import complete_openapi
from api.routes import (
    accuracy,
    catalog,
    estimates,
    gpus,
    health,
    mcp,
    models_admin,
    prices,
    recommendations,
    schema_ui,
    tco,
    tools,
    ui,
)
from api.settings import Settings
from api.wiring import Services

API_VERSION = "1.0.0"

DESCRIPTION = """\
gpu-advisor answers "which GPUs should we buy or rent for this AI workload, and what will it cost?".

The catalog holds GPUs with dense datasheet figures (never 2:4-sparse marketing figures), 8-GPU servers, providers,
dated rental offers and workload model architectures. Every record names its source; every price carries `as_of`.
Errors are RFC 9457 `application/problem+json` documents with `errors` naming each bad field.
Catalog reads carry an ETag and Cache-Control and answer 304 to a matching If-None-Match.
Every GET also answers HEAD: the same status and headers, no body.
Every response carries an X-Request-ID (yours, if you send one). Clients are rate limited (429 with Retry-After).
"""


async def _allow_header(message: Message, scope: Scope) -> None:
    # Litestar answers OPTIONS for a path from the first handler registered on it, so PUT and DELETE on one path
    # would advertise only PUT; rebuild Allow from every handler the path has.
    if message["type"] != "http.response.start" or scope.get("method") != "OPTIONS":
        return
    handler = scope.get("route_handler")
    method_map = scope["app"].route_handler_method_map
    methods = {m for path in getattr(handler, "paths", ()) for m in method_map.get(path, {})}
    if "GET" in methods:
        methods.add("HEAD")  # answered by HeadAsGet
    if methods:
        headers = MutableScopeHeaders.from_message(message)
        headers["Allow"] = ", ".join(sorted(methods))


async def _check_request(request: Request[Any, Any, Any]) -> None:
    check_query(request)
    await check_body(request)


def _services(state: State) -> Services:
    services: Services = state.services
    return services


def _rate_limiter(scope: Scope) -> RateLimiter | None:
    services: Services | None = getattr(scope["app"].state, "services", None)
    return services.rate_limiter if services else None


def create_app(settings: Settings) -> Litestar:
    """Build the application; nothing connects until the lifespan starts."""

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        services = await Services.start(settings)
        app.state.services = services
        app.state.mcp_sessions = http_session_manager(build_server(lambda: service_context(services), API_VERSION))
        try:
            async with app.state.mcp_sessions.run():
                yield
        finally:
            await services.close()

    prometheus = PrometheusConfig(app_name="gpu_advisor", prefix="gpu_advisor", group_path=True, exclude=["/metrics"])
    app = Litestar(
        route_handlers=[
            *gpus.ROUTES,
            *catalog.ROUTES,
            *accuracy.ROUTES,
            *prices.WRITES,
            *models_admin.HANDLERS,
            # Only the bulk import reads whole files; every other body is held to max_body_bytes.
            Router("/", route_handlers=prices.IMPORTS, request_max_body_size=settings.max_import_bytes),
            *estimates.ROUTES,
            *recommendations.ROUTES,
            *tco.ROUTES,
            *health.ROUTES,
            *tools.ROUTES,
            *mcp.ROUTES,
            *ui.ROUTES,
            *schema_ui.ROUTES,
        ],
        dependencies={"services": Provide(_services, sync_to_thread=False)},
        lifespan=[lifespan],
        exception_handlers={**EXCEPTION_HANDLERS, **BODY_EXCEPTION_HANDLERS},
        before_send=[_allow_header],
        before_request=_check_request,
        # Outermost first: a 429 is counted in the metrics too.
        middleware=[
            prometheus.middleware,
            # With limiting off there is nothing to ask per request, so the layer is left out altogether.
            *([RateLimitMiddleware(_rate_limiter, settings.api_keys)] if settings.rate_limit_per_minute > 0 else []),
        ],
        request_max_body_size=settings.max_body_bytes,
        cors_config=_cors(settings),
        openapi_config=OpenAPIConfig(
            title="gpu-advisor",
            version=API_VERSION,
            description=DESCRIPTION,
            path="/schema",
            render_plugins=[schema_ui.render_plugin()],
            use_handler_docstrings=False,
            servers=[Server(url="/", description="This instance")],
            components=Components(
                security_schemes={
                    "apiKey": SecurityScheme(
                        type="apiKey",
                        name=API_KEY_HEADER,
                        security_scheme_in="header",
                        description="One of the keys in GPU_ADVISOR_API_KEYS.",
                    )
                }
            ),
            tags=[
                Tag(name="catalog", description="GPUs, servers, providers, offers and workload models (read-only)."),
                Tag(
                    name="recommendations",
                    description="Workload sizing: ranked GPU options, single-configuration estimates.",
                ),
                Tag(name="pricing", description="Rent versus buy: total cost of ownership with its assumptions."),
                Tag(
                    name="administration",
                    description="Price changes; every write needs an X-API-Key from GPU_ADVISOR_API_KEYS.",
                ),
                Tag(
                    name="chatbot",
                    description="Tool definitions for chat APIs; the same tools over MCP at /mcp.",
                ),
                Tag(name="operations", description="Health probes and metrics."),
            ],
        ),
        debug=False,
        # Logging is configured once per process by configure_logging, not per app.
        logging_config=None,
    )
    complete_openapi(app.openapi_schema)
    restore_constraints(
        app.openapi_schema,
        {
            handler.opt[BODY_OPT]
            for handlers in app.route_handler_method_map.values()
            for handler in handlers.values()
            if BODY_OPT in handler.opt
        },
    )
    # Outside Litestar's routing, CORS and error handling, so 404s, 405s and preflights get ids and headers too;
    # the client's address is settled first, so the access log and the rate limit key on the same one.
    app.asgi_handler = ClientAddress(
        RequestContext(
            HeadAsGet(BodyDeadline(app.asgi_handler, settings.body_timeout_s, settings.body_min_rate)),
            cors=bool(settings.cors_origins),
        ),
        TrustedProxies(trusted_networks(settings.trusted_proxies)),
    )
    return app


def _cors(settings: Settings) -> CORSConfig | None:
    if not settings.cors_origins:
        return None
    return CORSConfig(
        allow_origins=list(settings.cors_origins),
        allow_methods=["GET", "POST", "PUT", "DELETE", "OPTIONS"],
        allow_headers=["Content-Type", "Accept-Language", API_KEY_HEADER, REQUEST_ID_HEADER, "If-None-Match"],
        expose_headers=[REQUEST_ID_HEADER, "ETag", "Location", "Retry-After", "RateLimit-Remaining"],
        max_age=600,
    )


def create_app_from_env() -> Litestar:
    """Factory for ASGI servers started with several workers: each worker reads the environment once."""
    settings = Settings.from_env()
    configure_logging(settings.log_level, settings.log_format)
    return create_app(settings)
