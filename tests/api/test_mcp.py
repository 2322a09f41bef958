"""Chatbot tools: the MCP server over streamable HTTP and stdio (the SDK's own client), and GET /v1/tools."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from mcp import Client, StdioServerParameters

from api.app import create_app
from api.chat.tools import TOOLS
from api.openapi import examples
from api.settings import Settings
from tests.conftest import LiveServer

CJK = re.compile(r"[\u4e00-\u9fff]")

# One call per tool, with what its answer must show.
CALLS: dict[str, tuple[dict[str, Any], str]] = {
    "recommend_gpus": ({"workload": {"kind": "inference", "model": "deepseek-r1", "concurrency": 50}}, "options"),
    "estimate_workload": (
        {"workload": {"kind": "inference", "model": "llama-3.1-70b", "concurrency": 32}, "gpu": "h200", "gpu_count": 8},
        "feasible",
    ),
    "compare_gpus": ({"ids": ["h100-sxm", "h200", "mi300x"]}, "ratios"),
    "find_gpu_prices": ({"gpu": "H100", "pricing": "on_demand", "limit": 3}, "items"),
    "rent_or_buy": ({"gpu": "h100-sxm", "gpu_count": 8, "years": 3, "utilization": 0.6}, "buy"),
    "list_models": ({"kind": "llm", "family": "qwen"}, "items"),
}


@pytest.fixture(scope="module")
def mcp_server(private_sqlite_url: str) -> Iterator[LiveServer]:
    settings = Settings(database_url=private_sqlite_url, rate_limit_per_minute=0)
    with LiveServer(create_app(settings)) as server:
        yield server


async def _call_every_tool(client: Client) -> None:
    listed = await client.list_tools()
    assert [tool.name for tool in listed.tools] == [tool.name for tool in TOOLS]
    for tool in listed.tools:
        assert tool.description and len(tool.description) > 80, tool.name
        assert tool.input_schema["type"] == "object"
    for name, (arguments, key) in CALLS.items():
        result = await client.call_tool(name, arguments)
        assert not result.is_error, (name, result.content)
        summary = result.content[0].text  # type: ignore[union-attr]
        assert len(summary) > 20, (name, summary)
        structured = result.structured_content or {}
        assert structured["summary"] == summary
        assert key in structured["result"], (name, sorted(structured["result"]))


async def test_every_tool_over_streamable_http(mcp_server: LiveServer) -> None:
    async with Client(mcp_server.url + "/mcp") as client:
        await _call_every_tool(client)


async def test_the_stdio_server_answers_every_tool(private_sqlite_url: str) -> None:
    command = Path(sys.executable).parent / "gpu-advisor"
    environment = {**os.environ, "DATABASE_URL": private_sqlite_url, "GPU_ADVISOR_LOG_LEVEL": "WARNING"}
    parameters = StdioServerParameters(command=str(command), args=["mcp"], env=environment)
    async with Client(parameters) as client:
        await _call_every_tool(client)
        resources = await client.list_resources()
        assert {str(resource.uri) for resource in resources.resources} >= {"gpu-advisor://catalog/gpus"}


async def test_summaries_come_in_the_asked_language(mcp_server: LiveServer) -> None:
    async with Client(mcp_server.url + "/mcp") as client:
        for name, (arguments, _) in CALLS.items():
            result = await client.call_tool(name, {**arguments, "lang": "zh"})
            assert not result.is_error, (name, result.content)
            assert CJK.search(result.content[0].text), (name, result.content[0].text)  # type: ignore[union-attr]


async def test_bad_arguments_are_a_tool_error_the_model_can_correct(mcp_server: LiveServer) -> None:
    async with Client(mcp_server.url + "/mcp") as client:
        unknown = await client.call_tool("recommend_gpus", {"workload": {"kind": "inference", "model": "llama-3-70"}})
        assert unknown.is_error
        assert "llama-3" in unknown.content[0].text  # type: ignore[union-attr]  # the closest ids
        wrong_type = await client.call_tool("compare_gpus", {"ids": "h100-sxm"})
        assert wrong_type.is_error
        assert "ids" in wrong_type.content[0].text  # type: ignore[union-attr]
        no_such_gpu = await client.call_tool("find_gpu_prices", {"gpu": "h1000"})
        assert no_such_gpu.is_error and "h1000" in no_such_gpu.content[0].text  # type: ignore[union-attr]


async def test_the_catalog_is_readable_as_resources(mcp_server: LiveServer) -> None:
    async with Client(mcp_server.url + "/mcp") as client:
        resources = await client.list_resources()
        uris = sorted(str(resource.uri) for resource in resources.resources)
        assert uris == sorted(
            f"gpu-advisor://catalog/{name}" for name in ("gpus", "systems", "providers", "offers", "models")
        )
        gpus = await client.read_resource("gpu-advisor://catalog/gpus")
        text = gpus.contents[0].text  # type: ignore[union-attr]
        assert '"id":"h100-sxm"' in text and '"catalog_version"' in text


async def test_a_recommendation_made_through_mcp_can_be_shared(mcp_server: LiveServer, private_sqlite_url: str) -> None:
    async with Client(mcp_server.url + "/mcp") as client:
        result = await client.call_tool(
            "recommend_gpus", {"workload": {"kind": "image_generation", "model": "sdxl", "images_per_hour": 321}}
        )
    rec_id = (result.structured_content or {})["result"]["id"]
    # Another instance on the same database serves it: the portal's share link works for a chatbot's answer too.
    async with AsyncTestClient(app=create_app(Settings(database_url=private_sqlite_url))) as http:
        stored = await http.get(f"/v1/recommendations/{rec_id}")
    assert stored.status_code == 200, stored.text
    assert stored.json()["id"] == rec_id


@pytest.mark.parametrize("format", ["openai", "anthropic"])
async def test_the_manifest_is_json_schema_and_matches_the_mcp_tools(
    client: AsyncTestClient[Litestar], mcp_server: LiveServer, format: str
) -> None:
    response = await client.get("/v1/tools", params={"format": format})
    assert response.status_code == 200
    manifest = response.json()
    definitions = {
        (tool["function"]["name"] if format == "openai" else tool["name"]): (
            tool["function"]["parameters"] if format == "openai" else tool["input_schema"]
        )
        for tool in manifest["tools"]
    }
    for schema in definitions.values():
        jsonschema.Draft202012Validator.check_schema(schema)
        assert "$ref" not in str(schema), "function definitions must be self-contained"
    async with Client(mcp_server.url + "/mcp") as mcp:
        listed = {tool.name: tool.input_schema for tool in (await mcp.list_tools()).tools}
    assert definitions == listed
    assert set(manifest["operations"]) == set(listed)


async def test_manifest_schemas_accept_the_documented_requests_and_reject_bad_ones(
    client: AsyncTestClient[Litestar],
) -> None:
    manifest = (await client.get("/v1/tools")).json()
    schemas = {tool["function"]["name"]: tool["function"]["parameters"] for tool in manifest["tools"]}
    operations = manifest["operations"]
    for request in examples.REQUESTS.values():
        jsonschema.validate(request, schemas["recommend_gpus"])
        # The arguments are the operation's body: a chatbot backend may send them as they are.
        assert operations["recommend_gpus"] == {
            "method": "POST",
            "path": "/v1/recommendations",
            "arguments": "json_body",
        }
        answer = await client.post("/v1/recommendations", json=request)
        assert answer.status_code == 200, answer.text
    for request in examples.TCO_REQUESTS.values():
        jsonschema.validate(request, schemas["rent_or_buy"])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(
            {"workload": {"kind": "inference", "model": "x", "concurrency": 0}}, schemas["recommend_gpus"]
        )
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"ids": ["h100-sxm"]}, schemas["compare_gpus"])


async def test_an_unknown_manifest_format_is_a_400(client: AsyncTestClient[Litestar]) -> None:
    response = await client.get("/v1/tools", params={"format": "gemini"})
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "format"
