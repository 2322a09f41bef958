"""The planner deploys what an experienced engineer would: each test is a behaviour the planner issue reported."""

from __future__ import annotations

import shlex

import pytest

from domain.catalog import Catalog
from domain.hardware.efficiency import EFFICIENCY, family_of
from domain.performance.layout import Layout
from domain.performance.serving import InstanceSpeed
from domain.planning import LayoutRequest, RecommendationRequest, recommend
from domain.workloads.requests import (
    Constraints,
    FineTuningWorkload,
    ImageGenerationWorkload,
    InferenceWorkload,
    TrainingWorkload,
)
from domain.workloads.resolve import WorkloadError, normalise
from domain.workloads.results import Option
from tests.conftest import NOW, RATE, gpu, llm, run_estimate


def copy_batch(option: Option) -> float:
    assert option.performance is not None and option.performance.concurrency is not None
    return option.performance.concurrency.expected / option.parallelism.data


# ---------------------------------------------------------------- layout


def test_70b_fp8_on_8_h100_runs_large_batches_on_multi_gpu_copies(reference: Catalog) -> None:
    option = run_estimate(reference, InferenceWorkload(model="llama-2-70b", precision="fp8"), "h100-sxm", 8)
    layout = option.parallelism
    # Not eight one-GPU copies with ~15 sequences each: two or more GPUs per copy, hundreds of sequences each.
    assert layout.tensor * layout.pipeline >= 2
    assert copy_batch(option) >= 100
    assert option.layout_reason and "chosen" in option.layout_reason


def test_deepseek_r1_gets_expert_parallel_with_data_parallel_attention(reference: Catalog) -> None:
    for gpu_id in ("h200", "b200"):
        option = run_estimate(reference, InferenceWorkload(model="deepseek-r1"), gpu_id, 8)
        assert option.parallelism.expert == 8, gpu_id
        assert option.launch is not None and "--enable-expert-parallel" in option.launch.command


def test_405b_fp8_on_8_mi300x_with_no_load_is_one_tp8_copy(reference: Catalog) -> None:
    # vLLM users (and AMD's published results) run Llama 3.1 405B FP8 as one TP8 copy on an 8x MI300X node: on a
    # fully connected Infinity Fabric mesh a TP4 group uses only three of each GPU's seven links.
    option = run_estimate(reference, InferenceWorkload(model="llama-3.1-405b", precision="fp8"), "mi300x", 8)
    assert (option.parallelism.tensor, option.parallelism.data) == (8, 1), option.layout_reason


def test_load_below_the_number_of_copies_is_not_multiplied(reference: Catalog) -> None:
    option = run_estimate(reference, InferenceWorkload(model="llama-3.1-8b", concurrency=1), "h100-sxm", 8)
    assert option.performance is not None and option.performance.concurrency is not None
    assert option.performance.concurrency.expected == 1
    assert option.performance.tokens_per_second is not None and option.performance.tpot_ms is not None
    # One sequence: throughput is one stream's, 1000 / TPOT tokens a second, whatever the copies.
    one_stream = 1000 / option.performance.tpot_ms.expected
    assert option.performance.tokens_per_second.expected == pytest.approx(one_stream, rel=0.02)


def test_forced_layout_is_used_and_an_impossible_one_is_infeasible(reference: Catalog) -> None:
    workload = InferenceWorkload(model="llama-3.1-70b", precision="fp8")
    forced = run_estimate(reference, workload, "h100-sxm", 8, parallelism=LayoutRequest(tensor=8), max_batch=64)
    assert (forced.parallelism.tensor, forced.parallelism.data) == (8, 1)
    assert copy_batch(forced) <= 64
    odd = run_estimate(reference, workload, "h100-sxm", 8, parallelism=LayoutRequest(tensor=3))
    assert odd.feasible is False and "does not divide" in " ".join(odd.reasons)


def test_trtllm_does_not_run_on_amd(reference: Catalog) -> None:
    option = run_estimate(reference, InferenceWorkload(model="llama-3.1-8b", engine="trtllm"), "mi300x", 1)
    assert option.feasible is False and "TensorRT-LLM" in option.reasons[0]


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm"])
def test_launch_command_flags_match_the_layout(reference: Catalog, engine: str) -> None:
    workload = InferenceWorkload(model="llama-3.1-70b", precision="fp8", engine=engine)  # type: ignore[arg-type]
    option = run_estimate(reference, workload, "h100-sxm", 8)
    assert option.launch is not None and option.launch.engine == engine
    words = shlex.split(option.launch.command)
    flags = dict(zip(words, [*words[1:], ""], strict=True))
    tensor = option.parallelism.tensor
    if engine == "vllm":
        assert flags["--tensor-parallel-size"] == str(tensor)
        assert flags["--quantization"] == "fp8"
    elif engine == "sglang":
        assert flags["--tp-size"] == str(tensor)
    else:
        assert flags["--tp_size"] == str(tensor)


# ---------------------------------------------------------------- ranking


def test_a_few_users_are_served_by_the_cheapest_setup_that_meets_them(reference: Catalog) -> None:
    request = RecommendationRequest(workload=InferenceWorkload(model="llama-3.1-70b", concurrency=5))
    answer = recommend(reference, request, now=NOW, lang="en", rate=RATE)
    meeting = [o for o in answer.options if o.meets_targets and o.cost is not None]
    best = answer.options[0]
    assert best.cost is not None and best.meets_targets
    assert best.cost.hourly <= 1.5 * min(o.cost.hourly for o in meeting if o.cost is not None)
    assert best.gpu_count == 1
    assert "5 concurrent sequences" in answer.summary


def test_an_image_rate_ranks_a_card_that_meets_it_cheaply_first(reference: Catalog) -> None:
    request = RecommendationRequest(workload=ImageGenerationWorkload(model="sdxl", images_per_hour=417))
    answer = recommend(reference, request, now=NOW, lang="en", rate=RATE)
    hourly = [o.cost.hourly for o in answer.options if o.cost is not None and o.meets_targets]
    best = answer.options[0]
    assert best.cost is not None and best.cost.hourly <= 1.1 * min(hourly)
    assert best.gpu.id != "b200"


# ---------------------------------------------------------------- fit


def test_qlora_of_a_70b_model_fits_one_48gb_card_with_a_thin_headroom_warning(reference: Catalog) -> None:
    workload = FineTuningWorkload(model="llama-3.1-70b", method="qlora")
    option = run_estimate(reference, workload, "l40s", 1)
    assert option.feasible and option.gpu_count == 1
    assert option.memory.required_gb <= option.memory.capacity_gb
    assert any("left over" in warning for warning in option.warnings)
    text = " ".join(option.reasons + [a.value for a in option.assumptions])
    assert "ZeRO" not in text


def test_qlora_smallest_configuration_is_one_card(reference: Catalog) -> None:
    request = RecommendationRequest(
        workload=FineTuningWorkload(model="llama-3.1-70b", method="qlora"),
        constraints=Constraints(gpus=["l40s"], require_offer=False),
    )
    answer = recommend(reference, request, now=NOW, lang="en", rate=RATE)
    assert answer.options and answer.options[0].gpu_count == 1


def test_fine_tuning_beyond_the_context_is_allowed_with_a_warning(reference: Catalog) -> None:
    workload = FineTuningWorkload(model="llama-2-7b", sequence_length=8192)
    option = run_estimate(reference, workload, "h100-sxm", 8)
    assert option.feasible and any("context extension" in w for w in option.warnings)
    normalise(TrainingWorkload(model="llama-2-7b", sequence_length=8192), reference)


def test_inference_beyond_the_context_stays_a_client_error(reference: Catalog) -> None:
    with pytest.raises(WorkloadError):
        normalise(InferenceWorkload(model="llama-2-7b", input_tokens=4000, output_tokens=500), reference)


# ---------------------------------------------------------------- factors


def test_families_have_rows_of_their_own(reference: Catalog) -> None:
    assert family_of(gpu(reference, "b200")) == "blackwell"
    assert family_of(gpu(reference, "h100-sxm")) == "hopper"
    assert family_of(gpu(reference, "l40s")) == "ada"
    assert family_of(gpu(reference, "mi355x")) == "cdna4"
    assert EFFICIENCY["blackwell"] != EFFICIENCY["hopper"]
    assert EFFICIENCY["blackwell"]["fp4_compute"].expected < 1.0  # no full FP4 peak


def step_ms(catalog: Catalog, gpu_id: str, model_id: str, precision: str, tensor: int, batch: int) -> float:
    speed = InstanceSpeed(llm(catalog, model_id), gpu(catalog, gpu_id), precision, "fp8", Layout(tensor), 1024, 2048)
    return speed.step(batch, "expected")[0] * 1e3


def test_fp8_decode_gets_less_than_the_whole_byte_saving(reference: Catalog) -> None:
    for gpu_id in ("h100-sxm", "h200", "b200"):
        bf16 = step_ms(reference, gpu_id, "llama-3.1-8b", "bf16", 1, 1)
        fp8 = step_ms(reference, gpu_id, "llama-3.1-8b", "fp8", 1, 1)
        assert bf16 / fp8 < 1.8, gpu_id


def test_tp8_decode_step_grows_with_the_group(reference: Catalog) -> None:
    # Measured-kernel tables: 70B FP8 on H200 at batch 64 is ~13 ms per step at TP8, not the ~7 ms of a fixed floor.
    assert step_ms(reference, "h200", "llama-3.1-70b", "fp8", 8, 64) >= 10.0
    tp2 = step_ms(reference, "h200", "llama-3.1-70b", "fp8", 2, 64)
    tp8 = step_ms(reference, "h200", "llama-3.1-70b", "fp8", 8, 64)
    assert tp8 > tp2 / 4  # far from linear scaling


def test_pcie_tensor_parallel_pays_for_its_all_reduces(reference: Catalog) -> None:
    nvlink = step_ms(reference, "h100-sxm", "llama-3.1-70b", "fp8", 4, 32)
    pcie = step_ms(reference, "l40s", "llama-3.1-70b", "fp8", 4, 32)
    ratio = gpu(reference, "h100-sxm").memory_bandwidth_gbps / gpu(reference, "l40s").memory_bandwidth_gbps
    assert pcie / nvlink > ratio * 0.9  # at least the bandwidth gap, with the PCIe all-reduces on top


def test_tpot_says_which_definition_it_uses(reference: Catalog) -> None:
    option = run_estimate(reference, InferenceWorkload(model="llama-3.1-8b", concurrency=64), "h100-sxm", 1)
    names = {a.name: a.value for a in option.assumptions}
    assert "chunked prefill" in names["latency_definitions"]
    assert option.performance is not None and option.performance.tpot_ms is not None
    step = step_ms(reference, "h100-sxm", "llama-3.1-8b", "bf16", 1, 64)
    assert option.performance.tpot_ms.expected > step  # prefill-carrying steps included


def test_every_factor_has_its_expected_value_inside_its_band() -> None:
    for family, row in EFFICIENCY.items():
        for name, value in row.items():
            assert value.low <= value.expected <= value.high, (family, name)
            assert value.source, (family, name)
            if "floor" not in name:
                assert value.high <= 1.0, (family, name)
