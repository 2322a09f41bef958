"""What an estimate states is what it used: its assumptions are built from the factors its speed model read."""

from __future__ import annotations

import msgspec
import pytest

from domain.catalog import Catalog
from domain.hardware.efficiency import FAMILY_NAMES, family_of
from domain.performance.factor_record import serving_factors
from domain.performance.images import image_factors
from domain.performance.layout import Layout
from domain.performance.serving import InstanceSpeed
from domain.performance.training import TrainingSpeed, training_factors
from domain.workloads.requests import InferenceWorkload, Workload
from domain.workloads.results import Option
from tests.conftest import gpu, llm, run_estimate

CASES = [
    ("llama-3.1-70b", "bf16", "b200", 8),
    ("llama-3.1-8b", "bf16", "b200", 1),
    ("llama-3.1-70b", "fp8", "b200", 4),
    ("llama-3.1-70b", "bf16", "h100", 8),
    ("llama-3.1-70b", "bf16", "mi300x", 1),
    ("llama-3.1-8b", "bf16", "l40s", 1),
    ("deepseek-r1", "fp8", "h200", 8),
    ("gpt-oss-120b", "fp4", "b200", 1),
]


def _estimate(reference: Catalog, model: str, precision: str, gpu_id: str, count: int) -> Option:
    workload = InferenceWorkload(model=model, precision=precision, concurrency=64)  # type: ignore[arg-type]
    option = run_estimate(reference, workload, gpu_id, count)
    assert option.feasible, option.reasons
    return option


def _speed(reference: Catalog, option: Option, model: str, precision: str, gpu_id: str) -> InstanceSpeed:
    """A speed model of the option's layout: the GEMM rates it applies depend on the layout, not on the load."""
    p = option.parallelism
    layout = Layout(
        tensor=p.tensor, pipeline=p.pipeline, expert=p.expert, dp_attention=bool(p.attention_data and p.tensor == 1)
    )
    engine = InferenceWorkload(model=model).engine
    model_spec, card = llm(reference, model), gpu(reference, gpu_id)
    return InstanceSpeed(model_spec, card, precision, "bf16", layout, 1000, 1000, engine=engine)


def _stated(option: Option, name: str) -> float:
    (value,) = [a.value for a in option.assumptions if a.name == name]
    return float(value.split()[0])


@pytest.mark.parametrize(("model", "precision", "gpu_id", "count"), CASES)
def test_the_stated_prefill_mfu_is_the_gemm_rate_the_estimate_used(
    reference: Catalog, model: str, precision: str, gpu_id: str, count: int
) -> None:
    # Blackwell's GEMMs run at a large-GEMM rate times a share for the layer's size; the family's prefill MFU is only
    # its attention's rate. An estimate that states the family's factor beside the model states what it did not use.
    option = _estimate(reference, model, precision, gpu_id, count)
    speed = _speed(reference, option, model, precision, gpu_id)
    used = speed.gemm_mfu.expected * speed.gemm_size_share
    assert _stated(option, "prefill_mfu") == pytest.approx(used, rel=5e-3)


@pytest.mark.parametrize(("model", "precision", "gpu_id", "count"), CASES)
def test_every_factor_the_speed_model_read_is_stated_with_its_value(
    reference: Catalog, model: str, precision: str, gpu_id: str, count: int
) -> None:
    option = _estimate(reference, model, precision, gpu_id, count)
    speed = _speed(reference, option, model, precision, gpu_id)
    stated = {a.name: a for a in option.assumptions}
    composite = {"w4_moe_layer_us", "w4_moe_expert_us", "w4_moe_expert_gbps"}
    composite |= {"all_reduce_alpha_us", "floor_growth_per_doubling", "mbu_decay_per_doubling"}
    for use in serving_factors(speed):
        assert use.family in (*FAMILY_NAMES, "all")
        assert use.precision == precision
        assert use.factor.source
        assert min(use.factor.low, use.factor.high) <= use.factor.expected <= max(use.factor.low, use.factor.high)
        if use.name in composite:
            continue
        assert use.name in stated, use.name
        assert stated[use.name].value == use.describe() and stated[use.name].source == use.factor.source


def test_families_with_a_gemm_size_curve_state_the_attention_rate_apart(reference: Catalog) -> None:
    option = _estimate(reference, "llama-3.1-70b", "bf16", "b200", 8)
    speed = _speed(reference, option, "llama-3.1-70b", "bf16", "b200")
    names = [use.name for use in serving_factors(speed)]
    assert family_of(speed.gpu) == "blackwell"
    assert "prefill_mfu" in names and "attention_mfu" in names
    assert _stated(option, "attention_mfu") == pytest.approx(speed.mfu.expected, rel=5e-3)


LLAMA_8B = {"model": "llama-3.1-8b"}
TRAINING_CASES = [
    ({"kind": "training", **LLAMA_8B, "train_tokens": 1e10, "precision": "fp8"}, "h100", 8, "train_mfu"),
    # FP8's gain is the share of the step its GEMMs take: the table's D behind it is stated as used.
    ({"kind": "training", **LLAMA_8B, "train_tokens": 1e10, "precision": "fp8"}, "h100", 8, "fp8_train_other_work"),
    ({"kind": "training", "model": "mixtral-8x7b", "train_tokens": 1e10}, "h100", 16, "moe_train"),
    ({"kind": "fine_tuning", **LLAMA_8B, "method": "qlora", "train_tokens": 1e8}, "l40s", 1, "qlora_slowdown"),
    # TRL's launch runs a PyTorch-native stack: its share of Megatron's MFU is stated too.
    ({"kind": "fine_tuning", **LLAMA_8B, "method": "lora", "train_tokens": 1e8}, "h100", 1, "pytorch_train"),
    (
        {"kind": "image_generation", "model": "sdxl", "images_per_hour": 417, "precision": "fp8"},
        "l40s",
        1,
        "fp8_prefill",
    ),
]


@pytest.mark.parametrize(("workload", "gpu_id", "count", "named"), TRAINING_CASES)
def test_training_and_image_estimates_state_every_factor_their_speed_read(
    reference: Catalog, workload: dict[str, object], gpu_id: str, count: int, named: str
) -> None:
    # Beside the family's MFU, the factors that multiply it (FP8, MoE, the adapters, 8-bit diffusion) are part of what
    # the estimate used, so they are stated with the values the speed model applied.
    option = run_estimate(reference, msgspec.convert(workload, Workload), gpu_id, count)
    assert option.feasible, option.reasons
    card = gpu(reference, gpu_id)
    if workload["kind"] == "image_generation":
        uses = image_factors(card, str(workload["precision"]))
    else:
        model = llm(reference, str(workload["model"]))
        method = str(workload.get("method", "full"))
        precision = str(workload.get("precision", "bf16"))
        speed = TrainingSpeed(
            model,
            card,
            method=method,
            precision=precision,
            train_tokens=1e10,
            sequence_length=4096,
            scenario="expected",
            fine_tuning=workload["kind"] == "fine_tuning",
        )
        assert option.parallelism is not None
        uses = training_factors(speed, count, option.parallelism.tensor)
    stated = {a.name: (a.value, a.source) for a in option.assumptions}
    assert named in [use.name for use in uses]
    for use in uses:
        assert stated.get(use.name) == (use.describe(), use.factor.source), use.name


def test_a_stated_factor_carries_the_record_on_the_wire(reference: Catalog) -> None:
    option = _estimate(reference, "llama-3.1-70b", "bf16", "b200", 8)
    speed = _speed(reference, option, "llama-3.1-70b", "bf16", "b200")
    wire = msgspec.json.decode(msgspec.json.encode(option))
    (prefill,) = [a for a in wire["assumptions"] if a["name"] == "prefill_mfu"]
    record = prefill["factor"]
    assert (record["family"], record["precision"]) == ("blackwell", "bf16")
    assert record["name"] == speed.gemm_mfu.name != speed.mfu.name
    assert record["expected"] == pytest.approx(speed.gemm_mfu.expected * speed.gemm_size_share)
    assert record["low"] <= record["expected"] <= record["high"]
    # Request-level assumptions are no factor of the model.
    assert all(a["factor"] is None for a in wire["assumptions"] if a["name"] in ("weights", "sequence", "engine"))


def test_a_tensor_parallel_estimate_states_the_link_share_of_its_large_all_reduces(reference: Catalog) -> None:
    # 70B on 8 H100s runs tensor parallel over NVSwitch: its prefill all-reduces take the ring at a measured share.
    option = _estimate(reference, "llama-3.1-70b", "bf16", "h100", 8)
    (share,) = [a for a in option.assumptions if a.name == "ring_all_reduce_link_share"]
    assert "custom_allreduce_perf" in share.source


def test_an_mla_estimate_states_the_measured_block_speeds_it_read(reference: Catalog) -> None:
    option = _estimate(reference, "deepseek-r1", "fp8", "h200", 8)
    names = {a.name for a in option.assumptions}
    assert {"mla_prefill_speed_16_heads", "mla_prefill_speed_128_heads"} <= names


def test_the_tensor_parallel_overlap_is_stated_where_a_layout_splits_its_layers(reference: Catalog) -> None:
    # The share of the exchange hidden behind the GEMMs is read only by tensor-parallel groups, and stated only there.
    tensor_sizes = set()
    for model, count in (("llama-3.1-70b", 16), ("llama-3.1-8b", 8)):
        workload = msgspec.convert({"kind": "training", "model": model, "train_tokens": 1e10}, Workload)
        option = run_estimate(reference, workload, "h100", count)
        assert option.feasible and option.parallelism is not None, option.reasons
        names = [assumption.name for assumption in option.assumptions]
        assert ("tp_overlap" in names) == (option.parallelism.tensor > 1), (model, option.parallelism)
        tensor_sizes.add(option.parallelism.tensor > 1)
    assert tensor_sizes == {True, False}
