"""The load benchmark's request mix: classes and their shares, the request pools, and the check that each answers."""

from __future__ import annotations

import json
import random
from typing import Any
from urllib.parse import quote, urlencode

import httpx

from api.openapi import examples
from bench import load_client, servers
from bench.recommend_latency import WORKLOADS

GPUS = "GET /v1/gpus?filters"

GPU = "GET /v1/gpus/{id}"

COMPARE = "GET /v1/gpus/compare"

OFFERS = "GET /v1/offers"

MODELS = "GET /v1/models"

SYSTEMS = "GET /v1/systems"

REC_REPEATED = "POST /v1/recommendations (repeated)"

REC_UNIQUE = "POST /v1/recommendations (unique)"

REC_GET = "GET /v1/recommendations/{id}"

ESTIMATES = "POST /v1/estimates"

TCO = "POST /v1/tco"

MIX: dict[str, int] = {  # request class: share in percent (the table of the docstring)
    GPUS: 14,
    GPU: 12,
    COMPARE: 6,
    OFFERS: 8,
    MODELS: 4,
    SYSTEMS: 4,
    REC_REPEATED: 20,
    REC_UNIQUE: 6,
    REC_GET: 12,
    ESTIMATES: 8,
    TCO: 6,
}

GPU_QUERIES: list[dict[str, Any]] = [
    {},
    {"vendor": "nvidia"},
    {"vendor": "amd", "sort": "memory_gb"},
    {"min_memory_gb": 80, "sort": "price"},
    {"ecosystem": "cuda", "supports": "fp8", "sort": "bf16_tflops", "order": "desc"},
    {"segment": "datacenter", "sort": "bandwidth", "limit": 10},
    {"supports": "nvlink", "min_memory_gb": 141},
    {"segment": "consumer", "sort": "price", "order": "asc"},
    {"ecosystem": "rocm"},
    {"sort": "name", "limit": 20, "offset": 20},
]

GPU_IDS = ["h100-sxm", "h200", "mi300x", "l40s", "b200", "a100-sxm-80gb", "H100 SXM5", "rtx-4090"]

COMPARE_IDS = ["h100-sxm,h200,mi300x", "h100-sxm,b200", "a100-sxm-80gb,h100-sxm,h200,b200", "l40s,rtx-4090"]

OFFER_QUERIES: list[dict[str, Any]] = [
    {"gpu": "h100-sxm"},
    {"gpu": "h200", "pricing": "on_demand"},
    {"provider": "runpod", "sort": "price"},
    {"pricing": "spot", "max_usd_per_gpu_hour": 3.5},
    {"gpu": "mi300x", "sort": "as_of"},
    {"max_age_days": 365, "limit": 20},
]

MODEL_PATHS = ["/v1/models", "/v1/models?kind=llm", "/v1/models?kind=diffusion", "/v1/models/deepseek-r1"]

SYSTEM_PATHS = ["/v1/systems", "/v1/systems/dgx-h100"]

ESTIMATE_BODIES: list[dict[str, Any]] = [
    *examples.ESTIMATE_REQUESTS.values(),
    {
        "workload": {"kind": "training", "model": "llama-3.1-8b", "train_tokens": 1e10},
        "gpu": "h100-sxm",
        "gpu_count": 8,
    },
    {
        "workload": {"kind": "fine_tuning", "model": "llama-3.1-70b", "method": "qlora", "train_tokens": 1e8},
        "gpu": "a100-sxm-80gb",
        "gpu_count": 2,
    },
    {"workload": {"kind": "image_generation", "model": "sdxl", "images_per_hour": 1000}, "gpu": "l40s", "gpu_count": 1},
]

TCO_BODIES: list[dict[str, Any]] = [
    *examples.TCO_REQUESTS.values(),
    {"gpu": "mi300x", "gpu_count": 8, "years": 4, "utilization": 0.8},
    {"system": "dgx-h100", "years": 3, "utilization": 0.5, "electricity_usd_per_kwh": 0.15},
]


def encode(body: dict[str, Any]) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()


def repeated_requests() -> dict[str, list[load_client.Request]]:
    """The distinct requests of every class but the unique recommendations and the GETs by id."""
    rec_bodies = [*examples.REQUESTS.values(), *(body for _, body in WORKLOADS)]
    return {
        GPUS: [load_client.Request(GPUS, "GET", f"/v1/gpus?{urlencode(q)}" if q else "/v1/gpus") for q in GPU_QUERIES],
        GPU: [load_client.Request(GPU, "GET", f"/v1/gpus/{quote(gpu_id, safe='')}") for gpu_id in GPU_IDS],
        COMPARE: [load_client.Request(COMPARE, "GET", f"/v1/gpus/compare?ids={ids}") for ids in COMPARE_IDS],
        OFFERS: [load_client.Request(OFFERS, "GET", f"/v1/offers?{urlencode(q)}") for q in OFFER_QUERIES],
        MODELS: [load_client.Request(MODELS, "GET", path) for path in MODEL_PATHS],
        SYSTEMS: [load_client.Request(SYSTEMS, "GET", path) for path in SYSTEM_PATHS],
        REC_REPEATED: [load_client.Request(REC_REPEATED, "POST", "/v1/recommendations", encode(b)) for b in rec_bodies],
        ESTIMATES: [load_client.Request(ESTIMATES, "POST", "/v1/estimates", encode(b)) for b in ESTIMATE_BODIES],
        TCO: [load_client.Request(TCO, "POST", "/v1/tco", encode(b)) for b in TCO_BODIES],
    }


def unique_recommendations(count: int, budget: float) -> list[load_client.Request]:
    """`count` recommendation requests never sent before: the four kinds in turn, each with a new figure."""
    bodies: list[dict[str, Any]] = []
    for index in range(count):
        step = index // 4 + 1
        workload: dict[str, Any] = [
            {"kind": "inference", "model": "llama-3.1-70b", "concurrency": 32 + step % 2000},
            {"kind": "training", "model": "llama-3.1-8b", "train_tokens": 1e11 + step * 1e6, "target_days": 30},
            {"kind": "fine_tuning", "model": "llama-3.1-70b", "method": "lora", "train_tokens": 2e8 + step * 1e3},
            {"kind": "image_generation", "model": "sdxl", "images_per_hour": 417 + step % 2000},
        ][index % 4]
        # The budget makes every body distinct even where the figure repeats; it never excludes anything.
        bodies.append({"workload": workload, "constraints": {"max_usd_per_hour": round(budget + step * 0.001, 3)}})
    encoded = [encode(body) for body in bodies]
    assert len(set(encoded)) == len(encoded)
    return [load_client.Request(REC_UNIQUE, "POST", "/v1/recommendations", body) for body in encoded]


def plan(
    count: int, pools: dict[str, list[load_client.Request]], mix: dict[str, int], rng: random.Random
) -> list[load_client.Request]:
    """`count` requests: each class's share of `mix` (largest remainders), shuffled, cycling over its pool.

    A pool is consumed in order, so the unique recommendations are each sent once (their pool must be large
    enough: see `class_counts`).
    """
    counts = class_counts(count, mix)
    labels = [label for label, n in counts.items() for _ in range(n)]
    rng.shuffle(labels)
    used = dict.fromkeys(counts, 0)
    requests = []
    for label in labels:
        pool = pools[label]
        requests.append(pool[used[label] % len(pool)])
        used[label] += 1
    return requests


def class_counts(count: int, mix: dict[str, int]) -> dict[str, int]:
    """How many of `count` requests each class gets, in proportion to its weight (largest remainders)."""
    total = sum(mix.values())
    exact = {label: count * weight / total for label, weight in mix.items() if weight}
    counts = {label: int(value) for label, value in exact.items()}
    for label in sorted(exact, key=lambda k: exact[k] - counts[k], reverse=True)[: count - sum(counts.values())]:
        counts[label] += 1
    return counts


def checked_pools(client: httpx.Client) -> dict[str, list[load_client.Request]]:
    """The repeated requests, each sent once and checked, and GETs of the recommendations they stored."""
    pools = repeated_requests()
    rec_ids = check_requests(client, pools)
    pools[REC_GET] = [load_client.Request(REC_GET, "GET", f"/v1/recommendations/{i}") for i in rec_ids]
    return pools


def check_requests(client: httpx.Client, pools: dict[str, list[load_client.Request]]) -> list[str]:
    """Send each distinct request once; the ids of the recommendations. BenchError on anything but 200."""
    ids: list[str] = []
    for requests in pools.values():
        for request in requests:
            response = client.request(
                request.method,
                request.path,
                content=request.body,
                headers={"Content-Type": "application/json"} if request.body else None,
            )
            if response.status_code != 200:
                body = f" {request.body.decode()}" if request.body else ""
                raise servers.BenchError(
                    f"{request.method} {request.path}{body} answered {response.status_code}: {response.text[:500]}"
                )
            if request.label == REC_REPEATED:
                rec_id = response.json().get("id")
                if not isinstance(rec_id, str) or not rec_id.startswith("rec_"):
                    raise servers.BenchError(f"POST /v1/recommendations answered no id: {response.text[:300]}")
                ids.append(rec_id)
    return ids
