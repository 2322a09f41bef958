"""GET /v1/tools: the chatbot tools as JSON-Schema function definitions, from the same source as the MCP server."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from litestar import Response, get
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Example
from litestar.params import Parameter

from api.chat.tools import TOOLS, Tool
from api.http.problems import problem_responses
from api.schemas import ToolManifestRead, ToolOperationRead

MCP_PATH = "/mcp"
Format = Literal["openai", "anthropic"]


def _definition(tool: Tool, format: Format) -> dict[str, Any]:
    if format == "anthropic":
        return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema()}
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.input_schema()},
    }


def tool_manifest(format: Format) -> ToolManifestRead:
    """Every tool in the shape the chosen chat API accepts, with the HTTP operation behind it."""
    return ToolManifestRead(
        format=format,
        tools=[_definition(tool, format) for tool in TOOLS],
        operations={
            tool.name: ToolOperationRead(
                method=tool.method, path=tool.path, arguments="json_body" if tool.method == "POST" else "query"
            )
            for tool in TOOLS
        },
        mcp_path=MCP_PATH,
    )


_EXAMPLE = {
    "format": "openai",
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "compare_gpus",
                "description": "Put 2 to 4 GPUs side by side ...",
                "parameters": {
                    "type": "object",
                    "properties": {"ids": {"type": "array", "items": {"type": "string"}, "minItems": 2}},
                    "required": ["ids"],
                },
            },
        }
    ],
    "operations": {"compare_gpus": {"method": "GET", "path": "/v1/gpus/compare", "arguments": "query"}},
    "mcp_path": "/mcp",
}


@get(
    "/v1/tools",
    operation_id="listTools",
    summary="Chatbot tools as function definitions",
    description=(
        "The tools recommend_gpus, estimate_workload, compare_gpus, find_gpu_prices and rent_or_buy as JSON-Schema "
        "function definitions: `format=openai` (default) gives `{type: function, function: {name, description, "
        "parameters}}` for OpenAI-compatible chat APIs, `format=anthropic` gives `{name, description, "
        "input_schema}`. The same tools are served over MCP at `/mcp` (streamable HTTP) and by `gpu-advisor mcp` "
        "(stdio). To run a tool call yourself, send its arguments to the operation in `operations` (POST: as the "
        "JSON body; GET: as query parameters, lists comma-separated)."
    ),
    tags=["chatbot"],
    responses={
        200: ResponseSpec(
            ToolManifestRead,
            generate_examples=False,
            description="The tool definitions.",
            examples=[Example(summary="OpenAI format (shortened)", value=_EXAMPLE)],
        )
    }
    | problem_responses(400),
)
async def list_tools(
    format: Annotated[
        Format, Parameter(description="The chat API's shape: openai or anthropic.", examples=[Example(value="openai")])
    ] = "openai",
) -> Response[ToolManifestRead]:
    return Response(tool_manifest(format), headers={"Cache-Control": "public, max-age=300"})


ROUTES = [list_tools]
