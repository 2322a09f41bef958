"""Every chatbot tool argument says what it means, and list_models finds the ids to pass as workload.model."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from api.chat.tools import TOOLS


def undescribed(node: Any, path: str = "") -> list[str]:
    """Property paths without a description, anywhere in a schema."""
    found: list[str] = []
    if isinstance(node, dict):
        for name, field in (node.get("properties") or {}).items():
            if "description" not in field:
                found.append(f"{path}.{name}")
            found += undescribed(field, f"{path}.{name}")
        for key, value in node.items():
            if key != "properties":
                found += undescribed(value, path)
    elif isinstance(node, list):
        for item in node:
            found += undescribed(item, path)
    return found


@pytest.mark.parametrize("tool", TOOLS, ids=[tool.name for tool in TOOLS])
def test_every_input_field_has_a_description(tool: Any) -> None:
    assert undescribed(tool.input_schema()) == []


async def test_list_models_filters_by_kind_and_family(client: AsyncTestClient[Litestar]) -> None:
    manifest = (await client.get("/v1/tools")).json()
    assert "list_models" in {tool["function"]["name"] for tool in manifest["tools"]}
    qwen = (await client.get("/v1/models", params={"kind": "llm", "family": "qwen"})).json()
    ids = {model["id"] for model in qwen["items"]}
    assert {"qwen3-8b", "qwen3-next-80b-a3b"} <= ids and all(m["family"] == "qwen" for m in qwen["items"])
