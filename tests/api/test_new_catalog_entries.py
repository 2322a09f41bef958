"""GPUs, systems and models added to the catalog answer through the recommendation and estimate endpoints."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

Client = AsyncTestClient[Litestar]

NEW_GPUS = ["gb300", "mi350x", "rtx-pro-6000-blackwell-server"]
NEW_SYSTEMS = ["dgx-b300", "gb200-nvl72", "gb300-nvl72", "mi355x-platform"]


async def post(client: Client, url: str, body: dict[str, Any]) -> Any:
    response = await client.post(url, json=body)
    assert response.status_code == 200, response.text
    return response.json()


@pytest.mark.parametrize("gpu_id", NEW_GPUS)
async def test_new_gpu_estimates_and_is_recommended(client: Client, gpu_id: str) -> None:
    workload = {"kind": "inference", "model": "llama-3.1-8b"}
    estimate = await post(client, "/v1/estimates", {"workload": workload, "gpu": gpu_id, "gpu_count": 1})
    assert estimate["feasible"] is True and estimate["gpu"]["id"] == gpu_id
    assert estimate["performance"]["tokens_per_second"]["expected"] > 0
    body = await post(client, "/v1/recommendations", {"workload": workload, "constraints": {"gpus": [gpu_id]}})
    assert body["id"].startswith("rec_")
    assert all(option["gpu"]["id"] == gpu_id for option in body["options"])


@pytest.mark.parametrize("system_id", NEW_SYSTEMS)
async def test_new_system_is_listed_with_its_gpu(client: Client, system_id: str) -> None:
    response = await client.get(f"/v1/systems/{system_id}")
    assert response.status_code == 200, response.text
    system = response.json()
    assert system["total_memory_gb"] > 0 and system["sources"]
    if system_id.endswith("nvl72"):
        assert system["gpu_count"] == 72


NEW_LLMS = [
    "llama-4-scout",
    "llama-4-maverick",
    "qwen3-8b",
    "qwen3-30b-a3b",
    "qwen3-coder-480b-a35b",
    "qwen3-next-80b-a3b",
    "deepseek-v3.1",
    "deepseek-v3.2",
    "kimi-k2",
    "glm-4.5-air",
    "glm-4.6",
    "gemma-3-27b",
    "mistral-large-2",
    "mixtral-8x22b",
]
NEW_DIFFUSION = ["sd3.5-large", "sd3.5-medium", "flux.1-schnell"]


@pytest.mark.parametrize("model_id", NEW_LLMS)
async def test_new_llm_is_recommended_and_estimated(client: Client, model_id: str) -> None:
    workload = {"kind": "inference", "model": model_id, "concurrency": 8}
    body = await post(client, "/v1/recommendations", {"workload": workload})
    assert body["options"], body["summary"]
    best = body["options"][0]
    assert best["feasible"] and best["cost"]["hourly"] > 0
    estimate = await post(
        client, "/v1/estimates", {"workload": workload, "gpu": best["gpu"]["id"], "gpu_count": best["gpu_count"]}
    )
    assert estimate["feasible"] is True
    assert estimate["performance"]["tokens_per_second"]["expected"] > 0


@pytest.mark.parametrize("model_id", NEW_DIFFUSION)
async def test_new_diffusion_model_is_recommended(client: Client, model_id: str) -> None:
    workload = {"kind": "image_generation", "model": model_id, "images_per_hour": 100}
    body = await post(client, "/v1/recommendations", {"workload": workload})
    assert body["options"] and body["options"][0]["feasible"], body["summary"]
