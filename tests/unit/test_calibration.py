"""The published measurements of perf-model.md (section 2 calibration points, sections 3 and 4) reproduced within 25%.

Each point carries its published figure, the source text and the conditions. Conditions the source does not state
are assumptions and are marked "assumed" in the point's id and conditions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from domain.catalog import Catalog, DiffusionModel
from domain.memory import MAX_BATCH, inference_memory, recompute_layers_needed, training_memory
from domain.performance import image_seconds, serving_point, training_run
from tests.conftest import gpu, llm

TOLERANCE = 0.25


# ---------------------------------------------------------------- predictions


def r1_1k_1k(catalog: Catalog, batch: int) -> tuple[float, float]:
    """DeepSeek-R1 FP8 on 8xH200, TP8, 1024 in / 1024 out, bf16 KV: (TPOT ms, output tokens/s)."""
    point = serving_point(
        llm(catalog, "deepseek-r1"), gpu(catalog, "h200"), "fp8", "bf16", 8, 1, batch, 1024, 1024, "expected"
    )
    return point.tpot_s * 1e3, point.tokens_per_s


def r1_max_throughput(catalog: Catalog, gpu_id: str) -> float:
    """Output tokens/s at the largest batch that fits: min(max_concurrency, MAX_BATCH) sequences of 4000 tokens."""
    model, device = llm(catalog, "deepseek-r1"), gpu(catalog, gpu_id)
    memory = inference_memory(model, device, "fp8", "fp8", 3200 + 800, 8, 1)
    batch = min(memory.max_concurrency, MAX_BATCH)
    assert batch >= 1
    return serving_point(model, device, "fp8", "fp8", 8, 1, batch, 3200, 800, "expected").tokens_per_s


def llama_405b_mi300x(catalog: Catalog, batch: int) -> float:
    point = serving_point(
        llm(catalog, "llama-3.1-405b"), gpu(catalog, "mi300x"), "fp8", "bf16", 8, 1, batch, 128, 128, "expected"
    )
    return point.tokens_per_s


def llama_70b_single_gpu(catalog: Catalog, gpu_id: str, concurrency: int) -> float:
    """Llama-3.1-70B FP8 on one GPU, 1024/1024: tokens/s at min(concurrency, what the GPU holds) sequences."""
    model, device = llm(catalog, "llama-3.1-70b"), gpu(catalog, gpu_id)
    held = inference_memory(model, device, "fp8", "bf16", 1024 + 1024, 1, 1).max_concurrency
    batch = min(concurrency, held)
    assert batch >= 1
    return serving_point(model, device, "fp8", "bf16", 1, 1, batch, 1024, 1024, "expected").tokens_per_s


def llama_8b_training(catalog: Catalog, gpu_id: str, recompute_all: bool) -> float:
    """Tokens/s of a full BF16 AdamW run of Llama-3.1-8B on one GPU at 4096 tokens.

    recompute_all False: the fewest recomputed layers that fit, as the ranking chooses them.
    """
    model, device = llm(catalog, "llama-3.1-8b"), gpu(catalog, gpu_id)
    states = training_memory(
        model,
        device,
        method="full",
        optimizer="adamw",
        sequence_length=4096,
        gpus=1,
        tensor_parallel=1,
        recompute_layers=0,
    )
    spare = states.usable_bytes - states.weights_bytes - states.optimizer_bytes
    layers = model.layers if recompute_all else recompute_layers_needed(model, spare, 4096, 1)
    assert layers <= model.layers, f"Llama-3.1-8B full fine-tune does not fit on {gpu_id}"
    run = training_run(
        model,
        device,
        method="full",
        precision="bf16",
        train_tokens=1e9,
        sequence_length=4096,
        gpus=1,
        tensor_parallel=1,
        gpus_per_node=8,
        recompute_layers=layers,
        scenario="expected",
    )
    return run.tokens_per_s


def sdxl_seconds(catalog: Catalog, steps: int) -> float:
    model = catalog.model("sdxl")
    assert isinstance(model, DiffusionModel)
    return image_seconds(model, gpu(catalog, "a100-sxm-80gb"), "fp16", 1024, 1024, steps, "expected")


# ---------------------------------------------------------------- the points


@dataclass(frozen=True)
class Point:
    id: str
    published: float
    unit: str
    source: str
    conditions: str
    predict: Callable[[Catalog], float]


R1_TPOT = (
    "DeepSeek-R1 FP8, 8xH200, SGLang TP8, 1k in / 1k out: TPOT 12.8 ms at concurrency 8; 34.6 ms "
    "(1,789 output tok/s) at concurrency 64."
)
R1_MAX = (
    "DeepSeek-R1, input 3,200 / output 800: max online throughput 4,176 tok/s on 8xH200 (TensorRT-LLM), "
    "4,574 on 8xMI300X (vLLM); H200 had the lower TTFT (dstack, March 2025)."
)
L405 = "Llama-3.1-405B FP8 on 8xMI300X (vLLM): 1,993 output tok/s at 128 in / 128 out; 36 tok/s at batch 1 (Oracle)."
L70 = (
    "Single GPU, MI300X vs H200 (vLLM): 70B FP8 at concurrency 128 MI300X 1.14x faster; "
    "single stream H200 1.12x faster."
)
TRAIN = (
    "MI300X on public ROCm releases: ~0.55-0.6x the NVIDIA MFU for training (SemiAnalysis Dec 2024; single-GPU 8B "
    "BF16 training H200 1.32-1.40x faster than MI300X despite 1.32x lower peak)."
)
SDXL = "Measured on A100-80G: SDXL 50 steps 5.93 s (diffusers) / 4.10 s (TensorRT); 30 steps 3.3 s plain."


POINTS = [
    Point(
        id="a1-r1-8xh200-tp8-1k1k-tpot-b8",
        published=12.8,
        unit="ms",
        source=R1_TPOT,
        conditions="DeepSeek-R1 FP8 weights, bf16 KV (assumed), TP8, batch 8, 1024/1024",
        predict=lambda c: r1_1k_1k(c, 8)[0],
    ),
    Point(
        id="a2-r1-8xh200-tp8-1k1k-tpot-b64",
        published=34.6,
        unit="ms",
        source=R1_TPOT,
        conditions="DeepSeek-R1 FP8 weights, bf16 KV (assumed), TP8, batch 64, 1024/1024",
        predict=lambda c: r1_1k_1k(c, 64)[0],
    ),
    Point(
        id="a3-r1-8xh200-tp8-1k1k-tokps-b64",
        published=1789,
        unit="output tok/s",
        source=R1_TPOT,
        conditions="DeepSeek-R1 FP8 weights, bf16 KV (assumed), TP8, batch 64, 1024/1024",
        predict=lambda c: r1_1k_1k(c, 64)[1],
    ),
    Point(
        id="b1-r1-8xh200-tp8-3200-800-max-fp8kv-assumed",
        published=4176,
        unit="output tok/s",
        source=R1_MAX,
        conditions="TP8 (assumed), FP8 KV (assumed), batch = min(max_concurrency at 4000 tokens, MAX_BATCH)",
        predict=lambda c: r1_max_throughput(c, "h200"),
    ),
    Point(
        id="b2-r1-8xmi300x-tp8-3200-800-max-fp8kv-assumed",
        published=4574,
        unit="output tok/s",
        source=R1_MAX,
        conditions="TP8 (assumed), FP8 KV (assumed), batch = min(max_concurrency at 4000 tokens, MAX_BATCH)",
        predict=lambda c: r1_max_throughput(c, "mi300x"),
    ),
    Point(
        id="c1-405b-8xmi300x-tp8-128-128-b1",
        published=36,
        unit="output tok/s",
        source=L405,
        conditions="Llama-3.1-405B FP8, TP8 (assumed), bf16 KV (assumed), batch 1, 128/128",
        predict=lambda c: llama_405b_mi300x(c, 1),
    ),
    Point(
        id="c2-405b-8xmi300x-tp8-128-128-concurrency64-assumed",
        published=1993,
        unit="output tok/s",
        source=L405,
        conditions="Llama-3.1-405B FP8, TP8 (assumed), bf16 KV (assumed), concurrency 64 (assumed), 128/128",
        predict=lambda c: llama_405b_mi300x(c, 64),
    ),
    Point(
        id="d1-70b-fp8-1gpu-single-stream-h200-over-mi300x-1k1k-assumed",
        published=1.12,
        unit="H200 / MI300X tok/s",
        source=L70,
        conditions="Llama-3.1-70B FP8, bf16 KV (assumed), one GPU, batch 1, 1024/1024 (assumed)",
        predict=lambda c: llama_70b_single_gpu(c, "h200", 1) / llama_70b_single_gpu(c, "mi300x", 1),
    ),
    Point(
        id="d2-70b-fp8-1gpu-concurrency128-mi300x-over-h200-1k1k-assumed",
        published=1.14,
        unit="MI300X / H200 tok/s",
        source=L70,
        conditions="Llama-3.1-70B FP8, bf16 KV (assumed), one GPU, min(128, max_concurrency at 2048 tokens) "
        "sequences (H200 holds 92, MI300X 128), 1024/1024 (assumed)",
        predict=lambda c: llama_70b_single_gpu(c, "mi300x", 128) / llama_70b_single_gpu(c, "h200", 128),
    ),
    Point(
        id="e1-8b-bf16-train-1gpu-h200-over-mi300x-full-recompute-assumed",
        published=1.36,
        unit="H200 / MI300X tokens/s",
        source=TRAIN,
        conditions="Llama-3.1-8B full AdamW, 4096 tokens, micro-batch 1, full recompute on both GPUs (assumed); "
        "published 1.32-1.40, midpoint 1.36",
        predict=lambda c: llama_8b_training(c, "h200", True) / llama_8b_training(c, "mi300x", True),
    ),
    Point(
        id="e2-8b-bf16-train-1gpu-h200-over-mi300x-fastest-fitting",
        published=1.36,
        unit="H200 / MI300X tokens/s",
        source=TRAIN,
        conditions="Llama-3.1-8B full AdamW, 4096 tokens, micro-batch 1, each GPU recomputing the fewest layers that "
        "make it fit (the ranking's choice); published 1.32-1.40, midpoint 1.36",
        predict=lambda c: llama_8b_training(c, "h200", False) / llama_8b_training(c, "mi300x", False),
    ),
    Point(
        id="f1-sdxl-a100-80g-fp16-1024-50-steps",
        published=5.93,
        unit="s per image",
        source=SDXL,
        conditions="SDXL base, fp16, 1024x1024, batch 1, CFG, 50 steps (diffusers)",
        predict=lambda c: sdxl_seconds(c, 50),
    ),
    Point(
        id="f2-sdxl-a100-80g-fp16-1024-30-steps",
        published=3.3,
        unit="s per image",
        source=SDXL,
        conditions="SDXL base, fp16, 1024x1024, batch 1, CFG, 30 steps (plain)",
        predict=lambda c: sdxl_seconds(c, 30),
    ),
]

# Points the model does not reproduce within the tolerance; each is an xfail(strict=True) case below.
KNOWN_OUTSIDE: dict[str, str] = {}


def cases() -> list[Any]:
    marked: list[Any] = []
    for point in POINTS:
        marks = []
        if point.id in KNOWN_OUTSIDE:
            marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_OUTSIDE[point.id]))
        marked.append(pytest.param(point, id=point.id, marks=marks))
    return marked


@pytest.mark.parametrize("point", cases())
def test_calibration_point(reference: Catalog, point: Point) -> None:
    predicted = point.predict(reference)
    error = predicted / point.published - 1
    assert abs(error) <= TOLERANCE, (
        f"{point.id}: predicted {predicted:.4g} {point.unit}, published {point.published:g} {point.unit} "
        f"({error:+.1%}, tolerance {TOLERANCE:.0%}); conditions: {point.conditions}; source: {point.source}"
    )


def test_calibration_table(reference: Catalog) -> None:
    table: list[dict[str, object]] = []
    outside = set()
    for point in POINTS:
        predicted = point.predict(reference)
        error = predicted / point.published - 1
        table.append(
            {
                "point": point.id,
                "unit": point.unit,
                "published": point.published,
                "predicted": round(predicted, 4),
                "error": f"{error:+.1%}",
            }
        )
        if abs(error) > TOLERANCE:
            outside.add(point.id)
    # Exactly the known outliers fall outside the band: a new miss or a fixed known one both fail here.
    assert outside == set(KNOWN_OUTSIDE), table


def test_points_are_distinct_and_sourced() -> None:
    assert len({point.id for point in POINTS}) == len(POINTS)
    assert all(point.published > 0 and point.source and point.conditions for point in POINTS)
