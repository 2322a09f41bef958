"""LoRA's adapter branches move each adapted layer's input and output through memory beside the frozen GEMMs."""

from __future__ import annotations

import pytest

from domain.catalog import Catalog
from domain.performance.lora_adapters import (
    PASSES_IN,
    PASSES_OUT,
    AdapterTargets,
    adapted_layers,
    adapter_bytes,
)
from domain.performance.training import TrainingSpeed
from domain.workloads.requests import FineTuningWorkload
from tests.conftest import gpu, llm, run_estimate


def _speed(
    reference: Catalog, method: str, targets: AdapterTargets = "all_linear", *, dropout: bool = True
) -> TrainingSpeed:
    return TrainingSpeed(
        llm(reference, "llama-3.1-8b"),
        gpu(reference, "h100-sxm"),
        method=method,
        precision="bf16",
        train_tokens=1e9,
        sequence_length=4096,
        scenario="expected",
        fine_tuning=True,
        stack="megatron",
        adapter_targets=targets,
        adapter_dropout=dropout,
    )


def test_a_fused_qkv_adapter_moves_its_input_and_output_widths(reference: Catalog) -> None:
    model = llm(reference, "llama-3.1-8b")
    (qkv,) = adapted_layers(model, "qkv")
    assert (qkv.inputs, qkv.outputs) == (4096, 4096 + 2 * 1024)
    moved = adapter_bytes((qkv,), 1, dropout=False)
    assert moved == pytest.approx(model.layers * 2 * (PASSES_IN * 4096 + PASSES_OUT * 6144))
    # Tensor parallelism splits the output; every rank reads the whole, gathered input.
    assert adapter_bytes((qkv,), 2, dropout=False) == pytest.approx(
        model.layers * 2 * (PASSES_IN * 4096 + PASSES_OUT * 3072)
    )


def test_every_linear_layer_is_adapted_once_per_token(reference: Catalog) -> None:
    dense, moe = llm(reference, "llama-3.1-8b"), llm(reference, "qwen3-30b-a3b")
    assert len(adapted_layers(dense, "all_linear")) == 7  # q, k, v, o, gate, up, down
    assert sum(item.per_token for item in adapted_layers(dense, "all_linear")) == 7 * dense.layers
    experts = moe.moe
    assert experts is not None
    # A token passes through its routed experts' gate, up and down projections, not every expert's.
    through = sum(
        item.per_token for item in adapted_layers(moe, "all_linear") if item.inputs == experts.expert_intermediate_size
    )
    assert through == moe.layers * experts.experts_per_token


def test_adapter_branches_slow_a_lora_step_by_what_they_move(reference: Catalog) -> None:
    none = _speed(reference, "full").run(8, 1, 8, 0).tokens_per_s
    qkv = _speed(reference, "lora", "qkv", dropout=False).run(8, 1, 8, 0).tokens_per_s
    every = _speed(reference, "lora", "all_linear", dropout=False).run(8, 1, 8, 0).tokens_per_s
    dropped = _speed(reference, "lora", "all_linear").run(8, 1, 8, 0).tokens_per_s
    assert dropped < every < qkv
    # Still faster than a full fine-tune, whose backward computes the weight gradients too.
    assert qkv > none
    # Megatron-Core's adapters gather their sequence-parallel input once more: tensor parallelism costs LoRA more.
    assert _speed(reference, "lora", "qkv").tensor_mfu(4) < _speed(reference, "full").tensor_mfu(4)


def test_a_lora_estimate_states_its_adapter_branches(reference: Catalog) -> None:
    for method, stated in (("lora", True), ("qlora", True), ("full", False)):
        workload = FineTuningWorkload(model="llama-3.1-8b", method=method, train_tokens=1e8)  # type: ignore[arg-type]
        option = run_estimate(reference, workload, "h100-sxm", 1)
        names = {item.name for item in option.assumptions}
        assert ("adapter_branches" in names) == stated, method
        # The memory bandwidth the branches move at is a stated factor too.
        assert ("lora_branch_bandwidth" in names) == stated, names
