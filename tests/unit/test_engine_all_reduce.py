"""Engines' all-reduce paths: vLLM's custom all-reduce takes two stages (reduce-scatter + all-gather) for larger
decode messages on fully NVLinked groups of more than two GPUs; other engines keep the one-shot path."""

from __future__ import annotations

import pytest

from domain.catalog import Catalog
from domain.performance.engines import ENGINES
from domain.performance.layout import Layout
from domain.performance.serving import InstanceSpeed


def speed(reference: Catalog, gpu_id: str, tensor: int, engine: str) -> InstanceSpeed:
    model, gpu = reference.model("llama-3.1-70b"), reference.gpu(gpu_id)
    assert model is not None and gpu is not None
    two_stage = ENGINES[engine].two_stage_all_reduce  # type: ignore[index]
    return InstanceSpeed(
        model,  # type: ignore[arg-type]
        gpu,
        "fp8",
        "fp8",
        Layout(tensor=tensor),
        1024,
        2048,
        two_stage_all_reduce=two_stage,
    )


def per_all_reduce_us(speed: InstanceSpeed, batch: int) -> float:
    return 1e6 * speed._collective_seconds(batch, "expected") / speed.all_reduces


def test_only_vllm_declares_the_two_stage_path() -> None:
    assert ENGINES["vllm"].two_stage_all_reduce
    assert not ENGINES["trtllm"].two_stage_all_reduce


@pytest.mark.parametrize("gpu_id", ["h100-sxm", "h200"])
def test_tp8_decode_all_reduce_follows_each_engines_table(reference: Catalog, gpu_id: str) -> None:
    # aiconfigurator-core 0.12.0 custom_allreduce_perf, 8192 x 64 bf16 (1 MiB) at TP8: vLLM 0.24.0 (graph) 15.0 /
    # 14.1 us, TensorRT-LLM 1.3.0rc20 26.0 / 25.7 us on H100 / H200.
    vllm, trtllm = speed(reference, gpu_id, 8, "vllm"), speed(reference, gpu_id, 8, "trtllm")
    assert per_all_reduce_us(vllm, 64) == pytest.approx(14.5, rel=0.15)
    assert per_all_reduce_us(trtllm, 64) > 1.4 * per_all_reduce_us(vllm, 64)


def test_small_messages_and_pairs_stay_one_shot(reference: Catalog) -> None:
    # Below 256 KB at TP8 (batch 8: 128 KiB) and at any size on two GPUs both engines take one stage.
    for tensor, batch in ((8, 8), (2, 64), (2, 256)):
        vllm, trtllm = speed(reference, "h200", tensor, "vllm"), speed(reference, "h200", tensor, "trtllm")
        assert per_all_reduce_us(vllm, batch) == pytest.approx(per_all_reduce_us(trtllm, batch))


def test_pcie_groups_have_no_two_stage_path(reference: Catalog) -> None:
    # vLLM disables its custom all-reduce on more than two PCIe-only GPUs (NCCL instead).
    vllm, trtllm = speed(reference, "l40s", 4, "vllm"), speed(reference, "l40s", 4, "trtllm")
    assert per_all_reduce_us(vllm, 64) == pytest.approx(per_all_reduce_us(trtllm, 64))


def test_prefill_messages_past_the_custom_buffer_take_the_ring(reference: Catalog) -> None:
    # 2048 tokens x 8192 bf16 = 32 MiB, past the custom all-reduce's 8 MiB buffer: NCCL, as for any engine.
    vllm, trtllm = speed(reference, "h200", 8, "vllm"), speed(reference, "h200", 8, "trtllm")
    assert per_all_reduce_us(vllm, 2048) == pytest.approx(per_all_reduce_us(trtllm, 2048))


@pytest.mark.parametrize(
    ("gpu_id", "measured_us"),
    [
        # aiconfigurator-core 0.12.0 custom_allreduce_perf, 32 MiB, median of the fit-side engines' newest releases.
        ("h200", {2: 139.5, 4: 172.8, 8: 194.4}),
        ("a100-sxm-80gb", {2: 224.4, 4: 290.0, 8: 372.6}),
        ("b200", {2: 86.6, 4: 121.8, 8: 146.5}),
        # RCCL all_reduce_perf on 8 MI300X, 32 MiB with graphs (AMD's xGMI blog, March 2025).
        ("mi300x", {8: 243.4}),
    ],
)
def test_a_prefill_all_reduce_costs_what_the_tables_measure(
    reference: Catalog, gpu_id: str, measured_us: dict[int, float]
) -> None:
    # A 2048-token prefill of an 8192-wide model: NCCL's ring at the measured share of the link, pairs included.
    for tensor, us in measured_us.items():
        assert per_all_reduce_us(speed(reference, gpu_id, tensor, "trtllm"), 2048) == pytest.approx(us, rel=0.1)


def test_a_group_past_the_nvlink_domain_moves_at_the_network_rate(reference: Catalog) -> None:
    # The inter-node rate is already what NCCL reaches: the NVLink tables' share does not discount it again.
    wide, node = speed(reference, "h100-sxm", 16, "trtllm"), speed(reference, "h100-sxm", 8, "trtllm")
    assert wide.tensor_off_domain and wide.ring_link_share is None
    assert node.ring_link_share is not None
