"""Whether a model loads: the memory edges of perf-model.md sections 1, 5 and 6, directly and through the ranking."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from domain.catalog import Catalog
from domain.performance.memory import GB, inference_memory
from domain.planning import EstimateRequest, RecommendationRequest, estimate, recommend
from domain.workloads.requests import InferenceWorkload
from domain.workloads.resolve import WorkloadError
from domain.workloads.results import ExchangeRate
from tests.conftest import gpu, llm

NOW = datetime(2026, 11, 29, tzinfo=UTC)
RATE = ExchangeRate(usd_to_cny=7.1, as_of=date(2026, 11, 29), source="test")


def fits(
    catalog: Catalog,
    model_id: str,
    gpu_id: str,
    precision: str,
    tensor_parallel: int,
    sequence_tokens: int = 2048,
    kv_precision: str = "bf16",
) -> bool:
    memory = inference_memory(
        llm(catalog, model_id), gpu(catalog, gpu_id), precision, kv_precision, sequence_tokens, tensor_parallel, 1
    )
    return memory.fits


# ---------------------------------------------------------------- one 8-GPU node, DeepSeek-R1 FP8


@pytest.mark.parametrize(
    ("gpu_id", "expected"),
    [
        # 671 GB / 8 = 83.9 GB of weights per GPU + 6 GiB reserve against 0.9 x 140.5 GiB = 135.8 GB: fits
        ("h200", True),
        # against 0.9 x 191.5 GiB = 185.1 GB: fits with ~95 GB of KV per GPU
        ("mi300x", True),
        # against 0.9 x 79.5 GiB = 76.8 GB: 83.9 GB of weights alone do not fit
        ("h100-sxm", False),
    ],
)
def test_deepseek_r1_fp8_on_one_8_gpu_node(reference: Catalog, gpu_id: str, expected: bool) -> None:
    assert fits(reference, "deepseek-r1", gpu_id, "fp8", tensor_parallel=8) is expected


def test_deepseek_r1_fp8_headroom_on_h100_is_negative(reference: Catalog) -> None:
    memory = inference_memory(llm(reference, "deepseek-r1"), gpu(reference, "h100-sxm"), "fp8", "bf16", 2048, 8, 1)
    # 76.83 GB usable - 83.875 GB weights - 6.44 GB reserve = -13.5 GB
    assert memory.kv_free_bytes / GB == pytest.approx(-13.49, abs=0.01)
    assert memory.max_concurrency == 0


# ---------------------------------------------------------------- 70B BF16 on one GPU


@pytest.mark.parametrize(
    ("model_id", "gpu_id", "expected"),
    [
        # 138 GB of weights + 2 GiB reserve < 0.9 x 191.5 GiB = 185.1 GB
        ("llama-2-70b", "mi300x", True),
        # 138 GB > 0.9 x 79.5 GiB = 76.8 GB
        ("llama-2-70b", "h100-sxm", False),
        # "a 70B BF16 model does not load on one H200": 141.2 GB + 3 GiB > 0.9 x 140.5 GiB = 135.8 GB
        ("llama-3.1-70b", "h200", False),
    ],
)
def test_70b_bf16_on_one_gpu(reference: Catalog, model_id: str, gpu_id: str, expected: bool) -> None:
    assert fits(reference, model_id, gpu_id, "bf16", tensor_parallel=1) is expected


def test_gpt_oss_120b_mxfp4_fits_one_80gb_gpu(reference: Catalog) -> None:
    # models.md: "fits one 80 GB GPU". 116.8e9 x 0.531 B = 62.0 GB + 6 GiB reserve < 76.8 GB
    memory = inference_memory(llm(reference, "gpt-oss-120b"), gpu(reference, "h100-sxm"), "fp4", "bf16", 2048, 1, 1)
    assert memory.weights_bytes == pytest.approx(62.02e9, rel=1e-3)
    assert memory.fits


def test_too_long_a_sequence_does_not_fit(reference: Catalog) -> None:
    # Llama-3.1-8B BF16 on a 24 GB L4: 0.9 x 24 x 0.94 GiB = 21.80 GB - 16.06 GB - 2 GiB leaves 3.59 GB for KV at
    # 32 x 2 x 8 x 128 x 2 = 131,072 B per token: 8192 tokens (1.07 GB) fit, 131,072 tokens (17.2 GB) do not --
    # "a model fits only if at least one sequence of the requested length fits".
    assert fits(reference, "llama-3.1-8b", "l4", "bf16", tensor_parallel=1, sequence_tokens=8192)
    assert not fits(reference, "llama-3.1-8b", "l4", "bf16", tensor_parallel=1, sequence_tokens=131_072)


# ---------------------------------------------------------------- through the ranking


def test_estimate_70b_bf16_on_one_h100_is_infeasible_and_names_two_gpus(reference: Catalog) -> None:
    request = EstimateRequest(workload=InferenceWorkload(model="llama-2-70b"), gpu="h100-sxm", gpu_count=1)
    option = estimate(reference, request, now=NOW, lang="en", rate=RATE)
    assert option.feasible is False
    assert option.performance is None
    assert option.cost is None
    text = " ".join(option.reasons)
    # "Does not fit on 1 GPU(s) of this kind (140 GB needed)."
    # "The smallest configuration that runs it: 2 x NVIDIA H100 SXM5 80GB."
    assert "Does not fit on 1 GPU" in text
    assert "2 x NVIDIA H100" in text


def test_estimate_70b_bf16_on_one_mi300x_is_feasible(reference: Catalog) -> None:
    request = EstimateRequest(workload=InferenceWorkload(model="llama-2-70b"), gpu="mi300x", gpu_count=1)
    option = estimate(reference, request, now=NOW, lang="en", rate=RATE)
    assert option.feasible is True
    assert option.gpu_count == 1
    assert (option.parallelism.tensor, option.parallelism.pipeline) == (1, 1)
    assert option.performance is not None
    assert option.performance.tokens_per_second is not None
    assert option.performance.tokens_per_second.expected > 0


def test_fp8_on_a_gpu_without_fp8_is_an_exclusion(reference: Catalog) -> None:
    request = RecommendationRequest(workload=InferenceWorkload(model="llama-3.1-8b", precision="fp8"))
    result = recommend(reference, request, now=NOW, lang="en", rate=RATE)
    codes = {exclusion.gpu: exclusion.code for exclusion in result.excluded}
    assert codes.get("a100-sxm-80gb") == "no_fp8"
    assert "a100-sxm-80gb" not in {option.gpu.id for option in result.options}
    # Hopper has FP8, so the same request still has options on it
    assert all(codes.get(gpu_id) != "no_fp8" for gpu_id in ("h100-sxm", "h200", "mi300x"))
    assert result.options


def test_unknown_model_raises_with_suggestions(reference: Catalog) -> None:
    request = RecommendationRequest(workload=InferenceWorkload(model="llama-3.1-8x"))
    with pytest.raises(WorkloadError) as raised:
        recommend(reference, request, now=NOW, lang="en", rate=RATE)
    assert raised.value.field == "workload.model"
    assert "llama-3.1-8b" in raised.value.suggestions
