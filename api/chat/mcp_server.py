"""The MCP server: the tools of api/tools.py and the catalog as resources, over stdio or mounted at /mcp."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import msgspec
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from api.chat.tools import TOOLS, ToolContext, ToolError, call_tool
from api.services.catalog_view import offer_read
from api.services.recommendations import keep_recommendation
from api.settings import Settings
from api.wiring import Services
from domain.planning import RecommendationRequest
from domain.workloads.results import Recommendation

log = logging.getLogger(__name__)

SERVER_NAME = "gpu-advisor"
INSTRUCTIONS = (
    "gpu-advisor sizes AI workloads on GPUs and prices them. Use recommend_gpus to choose hardware for a workload, "
    "estimate_workload for one given configuration, compare_gpus for specs side by side, find_gpu_prices for "
    "rental prices and rent_or_buy for total cost of ownership. Say the `summary` of a result; the structured data "
    "has every figure with its assumptions and sources. Pass lang 'zh' to get answers in Chinese."
)
RESOURCE_PREFIX = "gpu-advisor://catalog/"

_encoder = msgspec.json.Encoder()


def _catalog_documents(context: ToolContext) -> dict[str, tuple[str, Callable[[], Any]]]:
    view, today = context.view, context.now.date()
    return {
        "gpus": ("GPUs with dense datasheet figures and sources", lambda: list(view.gpus.values())),
        "systems": ("8-GPU servers with prices", lambda: list(view.systems.values())),
        "providers": ("Cloud providers", lambda: list(view.providers.values())),
        "offers": (
            "Dated rental offers",
            lambda: [offer_read(offer, today) for offer in view.catalog.offers],
        ),
        "models": ("Workload models: LLMs and diffusion pipelines", lambda: list(view.models.values())),
    }


def build_server(context_of: Callable[[], ToolContext], version: str) -> Server[Any]:
    """An MCP server whose every call reads the current context (catalog snapshot, rate, time)."""

    async def list_tools(_: Any, __: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=tool.name, title=tool.title, description=tool.description, input_schema=tool.input_schema()
                )
                for tool in TOOLS
            ]
        )

    async def run_tool(_: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            answer = await call_tool(params.name, params.arguments, context_of())
        except ToolError as error:
            # The model reads this and can correct its arguments; it is not a protocol failure.
            return types.CallToolResult(content=[types.TextContent(type="text", text=str(error))], is_error=True)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=answer.summary)],
            structured_content={"summary": answer.summary, "result": answer.data},
        )

    async def list_resources(_: Any, __: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        context = context_of()
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    name=name, title=title, uri=RESOURCE_PREFIX + name, description=title, mime_type="application/json"
                )
                for name, (title, _) in _catalog_documents(context).items()
            ]
        )

    async def read_resource(_: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        context = context_of()
        documents = _catalog_documents(context)
        name = str(params.uri).removeprefix(RESOURCE_PREFIX)
        if name not in documents:
            raise ValueError(
                f"No resource {params.uri!r}; resources: {', '.join(RESOURCE_PREFIX + n for n in documents)}"
            )
        body = _encoder.encode({"catalog_version": context.view.version, "items": documents[name][1]()})
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=params.uri, mime_type="application/json", text=body.decode())]
        )

    return Server(
        SERVER_NAME,
        version=version,
        title="gpu-advisor",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=run_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )


def service_context(services: Services) -> ToolContext:
    """The context of a call served by a running instance: its catalog, rate and recommendation store."""

    async def keep(result: Recommendation, request: RecommendationRequest) -> None:
        await keep_recommendation(services, result, request)

    return ToolContext(
        view=services.view,
        rate=services.exchange_rate,
        now=datetime.now(UTC),
        keep=keep,
        price_max_age_days=services.settings.price_max_age_days,
    )


def http_session_manager(server: Server[Any]) -> StreamableHTTPSessionManager:
    """Streamable HTTP without server-side sessions: any instance can answer any call."""
    return StreamableHTTPSessionManager(app=server, stateless=True, json_response=True)


async def run_stdio(server: Server[Any]) -> None:
    """Serve one client over this process's stdin and stdout."""
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def serve_stdio(settings: Settings, version: str) -> None:
    """`gpu-advisor mcp`: the same services as the HTTP instance (catalog kept current), one client on stdio."""
    services = await Services.start(settings)
    try:
        await run_stdio(build_server(lambda: service_context(services), version))
    finally:
        await services.close()
