"""The published OpenAPI document: committed copy in sync, every operation documented for chatbots."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import pytest
from litestar import Litestar

from api.app import create_app
from api.openapi import examples
from api.openapi.example_responses import EXAMPLE_TIME
from api.schemas import OfferWrite
from api.services.catalog_view import CatalogView, offer_read
from api.settings import Settings
from domain.catalog import Catalog
from domain.planning import EstimateRequest, RecommendationRequest
from domain.pricing.tco_schema import TcoRequest

COMMITTED = Path(__file__).parents[2] / "openapi" / "openapi.json"


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return create_app(Settings()).openapi_schema.to_schema()


def operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(path, method, op) for path, item in document["paths"].items() for method, op in item.items()]


def test_committed_document_matches_the_app(document: dict[str, Any]) -> None:
    committed = json.loads(COMMITTED.read_text(encoding="utf-8"))
    assert committed == document, "openapi/openapi.json is stale: run `gpu-advisor openapi`"


def test_every_operation_is_documented_with_examples(document: dict[str, Any]) -> None:
    problems = []
    for path, method, op in operations(document):
        for key in ("operationId", "summary", "description"):
            if not op.get(key):
                problems.append(f"{method.upper()} {path}: no {key}")
        has_example = any(p.get("examples") for p in op.get("parameters", [])) or any(
            content.get("examples")
            for response in op["responses"].values()
            for content in response.get("content", {}).values()
        )
        if not has_example:
            problems.append(f"{method.upper()} {path}: no example")
    assert problems == []


def test_operation_ids_are_unique(document: dict[str, Any]) -> None:
    ids = [op["operationId"] for _, _, op in operations(document)]
    assert len(ids) == len(set(ids))


def test_errors_are_documented_as_problem_documents(document: dict[str, Any]) -> None:
    for path, method, op in operations(document):
        for status, response in op["responses"].items():
            if status.startswith("4"):
                assert list(response["content"]) == ["application/problem+json"], (method, path, status)


def test_examples_are_the_catalog_records(reference: Catalog) -> None:
    view = CatalogView(reference, source="reference", loaded_at=datetime.now(UTC))
    published = {
        "GPU": view.gpus["h100-sxm"],
        "SYSTEM": view.systems["dgx-h100"],
        "PROVIDER": view.providers["digitalocean"],
        "OFFER": offer_read(
            reference.offers[[o.id for o in reference.offers].index("digitalocean-h100-sxm-on-demand")],
            EXAMPLE_TIME.date(),
        ),
        "LLM": view.models["deepseek-r1"],
        "DIFFUSION": view.models["sdxl"],
    }
    for name, record in published.items():
        assert getattr(examples, name) == msgspec.to_builtins(record), f"api/openapi/examples.py {name} is stale"


def test_app_construction_does_no_io(tmp_path: Path) -> None:
    database = tmp_path / "never-created.db"
    app = create_app(Settings(database_url=f"sqlite+aiosqlite:///{database}", redis_url="redis://127.0.0.1:1/0"))
    assert isinstance(app, Litestar) and not database.exists()


_CONSTRAINTS = (
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
    "enum",
)


def _normal(key: str, value: Any) -> str:
    if key == "enum":
        return json.dumps(sorted((v for v in value if v is not None), key=str))
    return json.dumps(float(value) if isinstance(value, int | float) else value)


def _constraints(node: dict[str, Any], prefix: str = "") -> set[tuple[str, str]]:
    """Every constraint a schema node states, by where it applies (the property itself or its items)."""
    if "const" in node:
        node = node | {"enum": [node["const"]]}
    found = {(prefix + key, _normal(key, node[key])) for key in _CONSTRAINTS if key in node}
    for branch in node.get("anyOf", []) + node.get("oneOf", []):
        found |= _constraints(branch, prefix)
    if isinstance(node.get("items"), dict):
        found |= _constraints(node["items"], prefix + "items.")
    return found


def test_published_request_schemas_state_every_constraint_the_decoder_enforces() -> None:
    # Compared with msgspec's own schema (what decoding enforces), not with the generator that wrote the document.
    committed = json.loads(COMMITTED.read_text(encoding="utf-8"))["components"]["schemas"]
    _, definitions = msgspec.json.schema_components([RecommendationRequest, EstimateRequest, TcoRequest, OfferWrite])
    missing = []
    for name, definition in definitions.items():
        for field, schema in definition.get("properties", {}).items():
            published = committed[name]["properties"][field]
            lost = _constraints(schema) - _constraints(published)
            missing += [f"{name}.{field}: {where}={value}" for where, value in sorted(lost)]
    assert missing == []
