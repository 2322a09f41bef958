"""The NVLink (scale-up) domain is the GPU's: NVL72 racks let tensor and expert parallel span 72 GPUs, 8-GPU boards
send anything wider over the inter-node network."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from domain.catalog import Catalog, LlmModel
from domain.performance.layout import Layout
from domain.performance.serving import InstanceSpeed
from domain.performance.training import TrainingSpeed
from domain.planning import EstimateRequest, LayoutRequest, estimate
from domain.workloads.requests import FineTuningWorkload, InferenceWorkload
from domain.workloads.results import ExchangeRate, Option

NOW = datetime(2026, 12, 1, tzinfo=UTC)
RATE = ExchangeRate(usd_to_cny=7.1, as_of=date(2026, 11, 1), source="test")


def run(catalog: Catalog, workload: object, gpu_id: str, count: int, **extra: object) -> Option:
    request = EstimateRequest(workload=workload, gpu=gpu_id, gpu_count=count, **extra)  # type: ignore[arg-type]
    return estimate(catalog, request, now=NOW, lang="en", rate=RATE)


def test_domain_size_comes_from_the_catalog(reference: Catalog) -> None:
    sizes = {gpu.id: gpu.interconnect.domain_gpus for gpu in reference.gpus}
    assert sizes["gb200"] == sizes["gb300"] == 72
    assert {sizes[g] for g in ("b200", "b300", "h100-sxm", "h200", "mi355x", "l40s", "h100-pcie")} == {8}


def speed(reference: Catalog, gpu_id: str, expert: int) -> InstanceSpeed:
    model, gpu = reference.model("deepseek-r1"), reference.gpu(gpu_id)
    assert model is not None and gpu is not None
    layout = Layout(tensor=1, expert=expert, dp_attention=True)
    return InstanceSpeed(model, gpu, "fp8", "fp8", layout, 1024, 256)  # type: ignore[arg-type]


@pytest.mark.parametrize("batch", [64, 512])
def test_wide_expert_parallel_pays_the_network_only_outside_the_domain(reference: Catalog, batch: int) -> None:
    # EP32 over 4 nodes of 8 B200 moves most of each all-to-all over 400G links; inside the NVL72 rack it stays on
    # NVLink. Inside one 8-GPU node the two GPUs' collectives cost the same.
    b200, gb200 = speed(reference, "b200", 32), speed(reference, "gb200", 32)
    assert b200._collective_seconds(batch, "expected") > 3 * gb200._collective_seconds(batch, "expected")
    inside = speed(reference, "b200", 8), speed(reference, "gb200", 8)
    assert inside[0]._collective_seconds(batch, "expected") == pytest.approx(
        inside[1]._collective_seconds(batch, "expected")
    )


def test_ep32_on_an_nvl72_rack_beats_ep32_over_b200_nodes(reference: Catalog) -> None:
    workload = InferenceWorkload(model="deepseek-r1", precision="fp8")
    forced = LayoutRequest(tensor=1, pipeline=1, expert=32)
    rack = run(reference, workload, "gb200", 32, parallelism=forced)
    nodes = run(reference, workload, "b200", 32, parallelism=forced)
    assert rack.performance is not None and nodes.performance is not None
    # GB200 has ~11% more compute and the same HBM bandwidth: a larger gap is the network's.
    assert rack.performance.tokens_per_second.expected > 1.3 * nodes.performance.tokens_per_second.expected
    assert rack.launch is not None and nodes.launch is not None
    assert "one 72-GPU NVLink domain" in rack.launch.command
    assert "4 nodes" in nodes.launch.command and "NVLink domain" not in nodes.launch.command
    assert any("one 72-GPU NVLink domain" in reason for reason in rack.reasons)
    assert any("inter-node network" in reason for reason in nodes.reasons)


def test_a_tight_latency_target_on_the_rack_may_take_a_wide_expert_group(reference: Catalog) -> None:
    # Low TPOT needs the experts spread thin; on the rack that costs NVLink, on B200 nodes the network.
    workload = InferenceWorkload(model="deepseek-r1", precision="fp8", max_tpot_ms=25)
    rack = run(reference, workload, "gb200", 32)
    nodes = run(reference, workload, "b200", 32)
    assert rack.performance is not None and nodes.performance is not None
    assert rack.parallelism.expert >= 16 and nodes.parallelism.expert >= 16
    assert rack.performance.tokens_per_second.expected > 2 * nodes.performance.tokens_per_second.expected


def test_non_mla_moe_may_split_attention_and_experts_across_the_rack(reference: Catalog) -> None:
    model = reference.model("qwen3-235b-a22b")
    assert model is not None
    forced = LayoutRequest(tensor=16, pipeline=1, expert=16)
    rack = run(reference, InferenceWorkload(model=model.id, precision="fp8"), "gb200", 16, parallelism=forced)
    nodes = run(reference, InferenceWorkload(model=model.id, precision="fp8"), "b200", 16, parallelism=forced)
    assert rack.feasible and nodes.feasible
    assert rack.performance is not None and nodes.performance is not None
    assert rack.performance.tokens_per_second.expected > 1.3 * nodes.performance.tokens_per_second.expected


def test_data_parallel_training_inside_the_rack_exchanges_over_nvlink(reference: Catalog) -> None:
    # One layout on one GPU, its 64 ranks in one NVLink domain or across 8-GPU nodes: only the exchange differs.
    model, gpu = reference.model("llama-3.1-8b"), reference.gpu("gb200")
    assert isinstance(model, LlmModel) and gpu is not None
    speed = TrainingSpeed(
        model, gpu, method="full", precision="bf16", train_tokens=1e6, sequence_length=4096, scenario="expected"
    )
    rack_compute, rack_exchange = speed.seconds(64, 1, 72, 0)
    nodes_compute, nodes_exchange = speed.seconds(64, 1, 8, 0)
    assert rack_compute == nodes_compute
    # A short full fine-tune: few steps of compute, so the gradient exchange over the network cannot hide.
    assert nodes_exchange > 2 * rack_exchange

    # The search on 8-GPU nodes does what an engineer would: it shortens the exchange by pipelining.
    workload = FineTuningWorkload(model="llama-3.1-8b", method="full", train_tokens=1e6)
    rack, nodes = run(reference, workload, "gb200", 64), run(reference, workload, "b200", 64)
    assert rack.parallelism.pipeline == 1 and nodes.parallelism.pipeline > 1
