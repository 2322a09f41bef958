"""The published OpenAPI document: committed copy in sync, every operation documented for chatbots."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import pytest
from litestar import Litestar

from api import examples
from api.app import create_app
from api.catalog_view import CatalogView, offer_read
from api.example_responses import EXAMPLE_TIME
from api.settings import Settings
from domain.catalog import Catalog

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
        assert getattr(examples, name) == msgspec.to_builtins(record), f"api/examples.py {name} is stale"


def test_app_construction_does_no_io(tmp_path: Path) -> None:
    database = tmp_path / "never-created.db"
    app = create_app(Settings(database_url=f"sqlite+aiosqlite:///{database}", redis_url="redis://127.0.0.1:1/0"))
    assert isinstance(app, Litestar) and not database.exists()
