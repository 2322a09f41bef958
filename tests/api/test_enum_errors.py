"""A value outside an enum is answered with the values allowed and the closest one, in every body and query."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from api.app import create_app
from api.http.request_body import BODY_OPT
from api.schemas.allowed_values import allowed_values
from api.settings import Settings

Client = AsyncTestClient[Litestar]


async def problem(client: Client, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
    response = await client.request(method, path, **kwargs)
    assert response.status_code == 400, (path, response.text)
    assert response.headers["content-type"].startswith("application/problem+json")
    document: dict[str, Any] = response.json()
    return document


async def test_a_misspelt_kind_lists_the_kinds_and_the_closest(client: Client) -> None:
    body = {"workload": {"kind": "inferance", "model": "llama-3.1-8b"}}
    found = await problem(client, "POST", "/v1/recommendations", json=body)
    error = found["errors"][0]
    assert error["field"] == "workload.kind"
    assert set(error["allowed"]) == {"inference", "training", "fine_tuning", "image_generation"}
    assert "did you mean inference?" in error["message"] and found["suggestions"] == ["inference"]
    assert "fine_tuning" in found["detail"]


async def test_a_misspelt_vendor_lists_the_vendors(client: Client) -> None:
    body = {"workload": {"kind": "inference", "model": "llama-3.1-8b"}, "constraints": {"vendors": ["nvidiaa"]}}
    error = (await problem(client, "POST", "/v1/recommendations", json=body))["errors"][0]
    assert error["field"] == "constraints.vendors[0]" and set(error["allowed"]) == {"nvidia", "amd", "intel", "huawei"}
    assert error["suggestions"] == ["nvidia"] and "did you mean nvidia?" in error["message"]
    query = await problem(client, "GET", "/v1/gpus", params={"vendor": "nvidiaa"})
    assert query["errors"][0]["allowed"] and query["suggestions"] == ["nvidia"]


def _operations(spec: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if isinstance(operation, dict) and "operationId" in operation:
                yield method.upper(), path, operation


def _enum(schema: dict[str, Any]) -> list[str]:
    values = list(schema.get("enum", []))
    for member in schema.get("oneOf", []) + schema.get("anyOf", []):
        values += member.get("enum", [])
    return [str(value) for value in values if value is not None]


async def test_every_enum_query_parameter_lists_its_values(client: Client) -> None:
    spec = (await client.get("/schema/openapi.json")).json()
    checked = 0
    for method, path, operation in _operations(spec):
        if method != "GET" or "{" in path:
            continue
        for parameter in operation.get("parameters", []):
            values = _enum(parameter.get("schema", {}))
            if parameter["in"] != "query" or not values:
                continue
            params = {p["name"]: _example(p) for p in operation["parameters"] if p.get("required")}
            params[parameter["name"]] = values[0] + "x"
            found = await problem(client, method, path, params=params)
            errors = [e for e in found["errors"] if e["field"] == parameter["name"]]
            assert errors, (path, parameter["name"], found)
            error = errors[0]
            assert set(error["allowed"]) == set(values), (path, parameter["name"], error)
            assert error["suggestions"] == [values[0]], (path, parameter["name"], error)
            checked += 1
    assert checked >= 5


def _example(parameter: dict[str, Any]) -> Any:
    if "example" in parameter:
        return parameter["example"]
    examples = list(parameter.get("examples", {}).values())
    assert examples, f"required parameter {parameter['name']} has no example"
    return examples[0]["value"]


def _strings(document: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every string leaf of a JSON document with its path in the form problems name fields."""
    if isinstance(document, dict):
        for key, value in document.items():
            yield from _strings(value, f"{path}.{key}" if path else key)
    elif isinstance(document, list):
        for index, value in enumerate(document):
            yield from _strings(value, f"{path}[{index}]")
    elif isinstance(document, str):
        yield path, document


def _set(document: Any, path: str, value: str) -> Any:
    changed = copy.deepcopy(document)
    parts = path.replace("[", ".[").split(".")
    target = changed
    for part in parts[:-1]:
        target = target[int(part[1:-1])] if part.startswith("[") else target[part]
    last = parts[-1]
    if last.startswith("["):
        target[int(last[1:-1])] = value
    else:
        target[last] = value
    return changed


async def test_every_enum_field_of_every_example_body_lists_its_values(seeded_sqlite_url: str) -> None:
    app = create_app(Settings(database_url=seeded_sqlite_url, rate_limit_per_minute=0, api_keys=("enum-test",)))
    async with AsyncTestClient(app=app) as client:
        checked = await _check_bodies(app, client, {"x-api-key": "enum-test"})
    assert len(checked) >= 8, checked


async def _check_bodies(app: Litestar, client: Client, headers: dict[str, str]) -> set[str]:
    spec = (await client.get("/schema/openapi.json")).json()
    checked: set[str] = set()
    handlers = {
        (re.sub(r":\w+}", "}", route.path), method): handler
        for route in app.routes
        for method, handler in _handlers(route)
    }
    for method, path, operation in _operations(spec):
        handler = handlers.get((path, method))
        target = handler.opt.get(BODY_OPT) if handler is not None else None
        content = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
        if target is None or not content:
            continue
        schema = content.get("schema", {})
        examples = [example["value"] for example in content.get("examples", {}).values() if "value" in example]
        examples += schema.get("examples", [])
        for ref in schema.get("allOf", []) + ([schema] if "$ref" in schema else []):
            examples += spec["components"]["schemas"][ref["$ref"].rsplit("/", 1)[1]].get("examples", [])
        for example in examples:
            for field, value in _strings(example):
                values = allowed_values(target, field, example)
                if not values or value not in values:
                    continue
                url = path.replace("{offer_id}", "new-offer").replace("{model_id}", "new-model")
                response = await client.request(method, url, json=_set(example, field, value + "x"), headers=headers)
                if response.status_code in (401, 403):
                    pytest.fail(f"{path}: the enum check ran after authorisation: {response.text}")
                assert response.status_code == 400, (path, field, response.text)
                error = next(e for e in response.json()["errors"] if e["field"] == field)
                assert set(error["allowed"]) == set(values) and error["suggestions"] == [value], (path, error)
                checked.add(f"{path} {field}")
    return checked


def _handlers(route: Any) -> Iterator[tuple[str, Any]]:
    for method, handler in getattr(route, "route_handler_map", {}).items():
        yield method, handler[0] if isinstance(handler, tuple) else handler


def test_chat_tools_list_the_allowed_values_too() -> None:
    from api.chat.tools import TOOLS_BY_NAME, ToolError

    with pytest.raises(ToolError, match=r"not one of .*did you mean inference\?"):
        TOOLS_BY_NAME["recommend_gpus"].decode({"workload": {"kind": "inferance", "model": "llama-3.1-8b"}})
    with pytest.raises(ToolError, match=r"did you mean spot\?"):
        TOOLS_BY_NAME["find_gpu_prices"].decode({"pricing": "spott"})


async def test_an_imported_row_with_a_misspelt_pricing_lists_the_pricing_models(seeded_sqlite_url: str) -> None:
    import csv
    import io

    from api.services.offer_import import CSV_COLUMNS

    row = {"id": "x-1", "provider": "digitalocean", "gpu": "h200", "pricing": "ondemand",
           "usd_per_gpu_hour": 1, "as_of": "2026-11-25", "source": "s"}  # fmt: skip
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=CSV_COLUMNS)
    writer.writeheader()
    writer.writerow(row)
    app = create_app(Settings(database_url=seeded_sqlite_url, rate_limit_per_minute=0, api_keys=("enum-test",)))
    async with AsyncTestClient(app=app) as client:
        headers = {"x-api-key": "enum-test", "content-type": "text/csv"}
        # Refused before anything is written: the shared database stays as it was.
        found = await problem(client, "POST", "/v1/admin/offers:bulk", content=text.getvalue(), headers=headers)
    error = found["errors"][0]
    assert error["line"] == 2 and error["field"] == "pricing", error
    assert "on_demand" in error["allowed"] and error["suggestions"] == ["on_demand"], error
