"""Output lengths: reasoning models' heavy tail, and the drain that ends an offline job."""

from __future__ import annotations

from domain.catalog import Catalog
from domain.performance.output_lengths import drained_share, length_sigma, median_length
from domain.planning import EstimateRequest, estimate
from domain.workloads.requests import InferenceWorkload
from tests.conftest import NOW, RATE, run_estimate

CAP = 32768


def test_reasoning_models_have_a_median_far_below_their_mean() -> None:
    sigma = length_sigma("deepseek-r1")
    assert sigma is not None
    assert median_length(4000, sigma) < 0.7 * 4000


def test_a_model_without_a_distribution_keeps_its_mean_length_throughput() -> None:
    assert length_sigma("llama-3.1-8b") is None
    assert drained_share(1000, 256, 1000, None, CAP) == 1.0


def test_a_short_offline_job_of_a_reasoning_model_loses_a_large_share_to_its_tail() -> None:
    sigma = length_sigma("deepseek-r1")
    # Ten batches' worth of requests: the drain of the last batch is not small against the job.
    assert drained_share(2560, 256, 2000, sigma, CAP) < 0.8


def test_the_tail_matters_less_as_the_job_grows_and_more_as_the_spread_grows() -> None:
    sigma = length_sigma("deepseek-r1")
    assert sigma is not None
    assert drained_share(256_000, 256, 2000, sigma, CAP) > drained_share(2560, 256, 2000, sigma, CAP)
    assert drained_share(2560, 256, 2000, sigma / 2, CAP) > drained_share(2560, 256, 2000, sigma, CAP)


def test_the_length_cap_bounds_the_tail() -> None:
    sigma = length_sigma("deepseek-r1")
    assert drained_share(2560, 256, 2000, sigma, 4000) > drained_share(2560, 256, 2000, sigma, CAP)


def test_a_reasoning_models_estimate_states_its_length_distribution_in_both_languages(reference: Catalog) -> None:
    for lang in ("en", "zh"):
        workload = InferenceWorkload(model="deepseek-r1", precision="fp8", use_case="batch", output_tokens=4000)
        request = EstimateRequest(workload=workload, gpu="h200", gpu_count=8)
        option = estimate(reference, request, now=NOW, lang=lang, rate=RATE)  # type: ignore[arg-type]
        stated = {a.name: a for a in option.assumptions}
        assert "output_lengths" in stated, lang
        assert "0.99" in stated["output_lengths"].value
    plain = run_estimate(reference, InferenceWorkload(model="llama-3.1-8b"), "h100-sxm", 1)
    assert "output_lengths" not in {a.name for a in plain.assumptions}
