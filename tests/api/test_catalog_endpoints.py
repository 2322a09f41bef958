"""Systems, providers, offers and models through the in-process app."""

from __future__ import annotations

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.api.test_gpus import get_json

Client = AsyncTestClient[Litestar]


async def test_systems(client: Client) -> None:
    body = await get_json(client, "/v1/systems")
    assert body["total"] >= 5
    dgx = await get_json(client, "/v1/systems/DGX%20H100")
    assert dgx["id"] == "dgx-h100" and dgx["total_memory_gb"] == 640 and dgx["gpu"]["id"] == "h100-sxm"
    assert dgx["price"]["usd"] > 0 and dgx["price"]["source"] and dgx["price"]["as_of"]


async def test_unknown_system_is_404(client: Client) -> None:
    response = await client.get("/v1/systems/dgx-h900")
    assert response.status_code == 404 and "dgx-h100" in response.json()["suggestions"]


async def test_providers_count_their_offers(client: Client) -> None:
    body = await get_json(client, "/v1/providers")
    assert body["total"] >= 8
    offers = await get_json(client, "/v1/offers?limit=200")
    for provider in body["items"]:
        assert provider["offer_count"] == sum(1 for o in offers["items"] if o["provider"] == provider["id"])


async def test_offers_filtered_by_gpu_alias_sorted_by_price(client: Client) -> None:
    body = await get_json(client, "/v1/offers?gpu=H100&limit=200")
    assert body["items"] and {o["gpu"] for o in body["items"]} == {"h100-sxm"}
    prices = [o["usd_per_gpu_hour"] for o in body["items"]]
    assert prices == sorted(prices)


async def test_offer_carries_date_source_and_instance_price(client: Client) -> None:
    body = await get_json(client, "/v1/offers?provider=digitalocean&gpu=h100-sxm&limit=200")
    node = next(o for o in body["items"] if o["gpus_per_instance"] == 8)
    assert node["usd_per_gpu_hour"] == 4.41 and node["usd_per_instance_hour"] == pytest.approx(35.28)
    assert all(o["as_of"] and o["source"] for o in body["items"])


async def test_offers_by_pricing_and_price_ceiling(client: Client) -> None:
    reserved = await get_json(client, "/v1/offers?pricing=reserved_1y&limit=200")
    assert reserved["items"] and all(o["pricing"] == "reserved_1y" for o in reserved["items"])
    assert any(o["gpu"] == "h100-sxm" and o["usd_per_gpu_hour"] == 1.9037 for o in reserved["items"])
    cheap = await get_json(client, "/v1/offers?max_usd_per_gpu_hour=1&limit=200")
    assert cheap["items"] and all(o["usd_per_gpu_hour"] <= 1 for o in cheap["items"])


async def test_offers_for_unknown_gpu_or_provider_are_404(client: Client) -> None:
    assert (await client.get("/v1/offers?gpu=h900")).status_code == 404
    assert (await client.get("/v1/offers?provider=nobody")).status_code == 404


async def test_models_by_kind(client: Client) -> None:
    llms = await get_json(client, "/v1/models?kind=llm")
    diffusion = await get_json(client, "/v1/models?kind=diffusion")
    everything = await get_json(client, "/v1/models")
    assert llms["total"] >= 18 and diffusion["total"] >= 3
    assert llms["total"] + diffusion["total"] == everything["total"]
    assert {m["kind"] for m in llms["items"]} == {"llm"}


@pytest.mark.parametrize("name", ["deepseek-r1", "DeepSeek-R1", "deepseek-ai/DeepSeek-R1"])
async def test_model_by_id_or_alias(client: Client, name: str) -> None:
    model = await get_json(client, f"/v1/models/{name}")
    assert model["id"] == "deepseek-r1" and model["mla"]["kv_lora_rank"] == 512


async def test_unknown_model_is_404_with_suggestions(client: Client) -> None:
    response = await client.get("/v1/models/llama-3.1-7b")
    assert response.status_code == 404 and response.json()["suggestions"]
