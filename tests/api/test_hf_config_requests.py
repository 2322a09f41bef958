"""custom_model.hf_config: a pasted config.json is sized like a catalog model; a broken one is a 400 naming it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

CONFIGS = Path(__file__).parent.parent / "fixtures" / "hf_configs"
FAMILIES = sorted(path.stem for path in CONFIGS.glob("*.json"))


def config(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((CONFIGS / f"{name}.json").read_text())
    return loaded


@pytest.mark.parametrize("name", FAMILIES)
async def test_each_family_answers_200(client: AsyncTestClient[Litestar], name: str) -> None:
    workload = {"kind": "inference", "custom_model": {"name": name, "hf_config": config(name)}, "concurrency": 4}
    response = await client.post("/v1/recommendations", json={"workload": workload})
    assert response.status_code == 200, response.text
    assert response.json()["options"]
    estimate = await client.post("/v1/estimates", json={"workload": workload, "gpu": "h200", "gpu_count": 8})
    assert estimate.status_code == 200, estimate.text


@pytest.mark.parametrize(
    ("hf_config", "field"),
    [
        ({"model_type": "t5", "num_layers": 24}, "workload.custom_model.hf_config.model_type"),
        (
            {k: v for k, v in config("llama-3.1-8b").items() if k != "hidden_size"},
            "workload.custom_model.hf_config.hidden_size",
        ),
        (config("llama-3.1-8b") | {"num_hidden_layers": "32"}, "workload.custom_model.hf_config.num_hidden_layers"),
        (
            config("llama-3.1-8b") | {"tie_word_embeddings": "false"},
            "workload.custom_model.hf_config.tie_word_embeddings",
        ),
        (config("llama-3.1-8b") | {"num_key_value_heads": 3}, "workload.custom_model.hf_config.num_key_value_heads"),
        (config("mistral-7b") | {"torch_dtype": "float128"}, "workload.custom_model.hf_config.torch_dtype"),
    ],
)
async def test_a_broken_config_is_a_400_naming_the_field(
    client: AsyncTestClient[Litestar], hf_config: dict[str, Any], field: str
) -> None:
    workload = {"kind": "inference", "custom_model": {"hf_config": hf_config}}
    for url, extra in (("/v1/recommendations", {}), ("/v1/estimates", {"gpu": "h100", "gpu_count": 8})):
        response = await client.post(url, json={"workload": workload} | extra)
        assert response.status_code == 400, response.text
        problem = response.json()
        assert response.headers["content-type"].startswith("application/problem+json")
        assert field in json.dumps(problem), problem


async def test_hf_config_and_figures_together_is_a_400(client: AsyncTestClient[Litestar]) -> None:
    custom = {"hf_config": config("llama-3.1-8b"), "params_b": 8}
    response = await client.post(
        "/v1/recommendations", json={"workload": {"kind": "inference", "custom_model": custom}}
    )
    assert response.status_code == 400 and "params_b" in response.text


async def test_figures_without_params_is_a_400_naming_it(client: AsyncTestClient[Litestar]) -> None:
    custom = {"layers": 32, "hidden_size": 4096, "attention_heads": 32, "kv_heads": 8}
    response = await client.post(
        "/v1/recommendations", json={"workload": {"kind": "inference", "custom_model": custom}}
    )
    assert response.status_code == 400 and "params_b" in response.text
