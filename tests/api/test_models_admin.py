"""PUT /v1/admin/models/{id}: a config.json becomes a catalog model with history; bad ones change nothing."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from api.adapters.storage.bootstrap import migrate_and_seed
from api.app import create_app
from api.settings import Settings
from tests.conftest import create_database, drop_database, sqlite_url

KEY = "admin-key-for-tests"
HEADERS = {"X-API-Key": KEY}
Client = AsyncTestClient[Litestar]
CONFIGS = Path(__file__).parent.parent / "fixtures" / "hf_configs"


def config(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((CONFIGS / f"{name}.json").read_text())
    return loaded


@pytest.fixture(params=["sqlite", "postgresql"])
async def admin(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Client]:
    """An app with one admin key on a database of this test's own, SQLite and the real PostgreSQL."""
    url = sqlite_url(tmp_path) if request.param == "sqlite" else await create_database()
    try:
        await migrate_and_seed(url)
        async with AsyncTestClient(app=create_app(Settings(database_url=url, api_keys=(KEY,)))) as client:
            yield client
    finally:
        if request.param != "sqlite":
            await drop_database(url)


async def test_a_config_becomes_a_model_with_history(admin: Client) -> None:
    before = (await admin.get("/health/ready")).json()["catalog_version"]
    body = {"hf_config": config("qwen3-30b-a3b"), "name": "Our MoE", "aliases": ["acme/our-moe"], "sources": ["ours"]}
    created = await admin.put("/v1/admin/models/our-moe", json=body, headers=HEADERS)
    assert created.status_code == 201, created.text
    assert created.json()["moe"]["routed_experts"] == 128 and created.json()["sources"] == ["ours"]
    assert (await admin.get("/health/ready")).json()["catalog_version"] != before
    found = (await admin.get("/v1/models/acme/our-moe")).json()
    assert found["id"] == "our-moe" and found["params_b"] == pytest.approx(30.5, rel=0.02)
    workload = {"kind": "inference", "model": "our-moe", "concurrency": 4}
    recommended = await admin.post("/v1/recommendations", json={"workload": workload})
    assert recommended.status_code == 200 and recommended.json()["options"]

    again = await admin.put("/v1/admin/models/our-moe", json=body | {"name": "Our MoE v2"}, headers=HEADERS)
    assert again.status_code == 200 and again.json()["name"] == "Our MoE v2"
    history = (await admin.get("/v1/model-history/our-moe")).json()
    assert [item["change"] for item in history["items"]] == ["updated", "created"] and history["total"] == 2
    assert history["items"][0]["actor"] == "api-key-1"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"hf_config": {"model_type": "bert"}}, "hf_config.model_type"),
        ({"hf_config": {k: v for k, v in config("mistral-7b").items() if k != "vocab_size"}}, "hf_config.vocab_size"),
        ({"hf_config": config("mistral-7b"), "surprise": 1}, "surprise"),
    ],
)
async def test_a_bad_body_is_a_400_and_changes_nothing(admin: Client, body: dict[str, Any], field: str) -> None:
    before = (await admin.get("/health/ready")).json()["catalog_version"]
    response = await admin.put("/v1/admin/models/broken", json=body, headers=HEADERS)
    assert response.status_code == 400 and field in response.text, response.text
    assert (await admin.get("/v1/models/broken")).status_code == 404
    assert (await admin.get("/health/ready")).json()["catalog_version"] == before


async def test_without_the_key_it_is_401(admin: Client) -> None:
    response = await admin.put("/v1/admin/models/x", json={"hf_config": config("mistral-7b")})
    assert response.status_code == 401
    assert (await admin.get("/v1/model-history/x")).status_code == 404


async def test_an_alias_another_model_has_is_a_409(admin: Client) -> None:
    body = {"hf_config": config("mistral-7b"), "aliases": ["DeepSeek-R1"]}
    response = await admin.put("/v1/admin/models/clash", json=body, headers=HEADERS)
    assert response.status_code == 409 and "DeepSeek-R1" in response.text, response.text
    assert (await admin.get("/v1/models/clash")).status_code == 404


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        # 201-300 characters were schema-valid, stored on SQLite and refused by PostgreSQL's VARCHAR(200).
        ({"name": "M" * 201}, "name"),
        ({"name": "x" * 300}, "name"),
        # Nothing could ever look these up; they are the client's mistake, not a clash with what is stored.
        ({"name": "---"}, "name"),
        ({"aliases": ["ok-alias", "!!!"]}, "aliases[1]"),
    ],
)
async def test_a_name_no_store_can_hold_or_find_is_a_400_on_every_store(
    admin: Client, extra: dict[str, Any], field: str
) -> None:
    before = (await admin.get("/health/ready")).json()["catalog_version"]
    response = await admin.put(
        "/v1/admin/models/named", json={"hf_config": config("mistral-7b")} | extra, headers=HEADERS
    )
    assert response.status_code == 400, response.text
    assert [error["field"] for error in response.json()["errors"]] == [field]
    assert (await admin.get("/v1/models/named")).status_code == 404
    assert (await admin.get("/health/ready")).json()["catalog_version"] == before


async def test_a_name_of_the_column_length_is_stored_whole_on_every_store(admin: Client) -> None:
    name = "N" * 200
    response = await admin.put(
        "/v1/admin/models/long", json={"hf_config": config("mistral-7b"), "name": name}, headers=HEADERS
    )
    assert response.status_code == 201, response.text
    assert (await admin.get("/v1/models/long")).json()["name"] == name


async def test_a_config_with_a_string_boolean_is_a_400_on_every_store(admin: Client) -> None:
    body = {"hf_config": config("llama-3.1-8b") | {"tie_word_embeddings": "false"}}
    response = await admin.put("/v1/admin/models/stringly", json=body, headers=HEADERS)
    assert response.status_code == 400, response.text
    assert [error["field"] for error in response.json()["errors"]] == ["hf_config.tie_word_embeddings"]
