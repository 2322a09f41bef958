"""MLA prefill: replicated down-projections and the attention block's measured rate."""

from __future__ import annotations

import pytest

from domain.catalog import Catalog
from domain.hardware.efficiency import EFFICIENCY, Scenario
from domain.performance import mla
from domain.performance.layout import Layout
from domain.performance.serving import InstanceSpeed
from tests.conftest import gpu, llm


def prefill_s(catalog: Catalog, model_id: str, gpu_id: str, precision: str, layout: Layout, isl: int) -> float:
    speed = InstanceSpeed(llm(catalog, model_id), gpu(catalog, gpu_id), precision, "fp8", layout, isl, 1)
    return speed.prefill("expected")[0]


def test_down_projections_are_replicated_on_every_gpu_of_the_attention_group(reference: Catalog) -> None:
    model = llm(reference, "deepseek-v3")
    # q_a (7168 x 1536) and kv_a (7168 x 576) of DeepSeek-V3, out of a 187M-parameter block.
    assert mla.replicated_params(model) == 7168 * (1536 + 512 + 64)
    assert mla.block_params(model) == pytest.approx(187.0e6, rel=0.01)
    one, eight = mla.prefill_flops(model, 2048, 1), mla.prefill_flops(model, 2048, 8)
    assert eight - one == pytest.approx(model.layers * 2 * 2048 * 7 * mla.replicated_params(model))


def test_models_without_mla_have_no_mla_work(reference: Catalog) -> None:
    model = llm(reference, "llama-3.1-70b")
    assert mla.block_params(model) == mla.replicated_params(model) == 0.0


def test_the_curve_runs_from_16_to_128_heads_per_gpu_and_stays_inside_its_ends() -> None:
    few = mla.prefill_speed("hopper", 8, 16, "expected")
    many = mla.prefill_speed("hopper", 8, 128, "expected")
    middle = mla.prefill_speed("hopper", 8, 2**5.5, "expected")  # halfway in log2
    # Faster with more heads per GPU, log-linear between the tables' ends.
    assert 1.0 < few < many
    assert middle == pytest.approx((few + many) / 2)
    assert mla.prefill_speed("hopper", 8, 4, "expected") == few
    assert mla.prefill_speed("hopper", 8, 512, "expected") == many
    assert mla.prefill_speed("cdna3", 16, 16, "expected") is None  # the 16-bit GEMM rate
    assert mla.prefill_speed("hopper", 0, 16, "expected") is None  # weight-only 4-bit: no table


def test_fp8_gemms_barely_speed_up_the_mla_prefill_on_hopper(reference: Catalog) -> None:
    # The tables: 0.3222 ms per layer with bf16 GEMMs, 0.3150 ms with fp8_block (16 heads, 2048 tokens, H200), so a
    # DeepSeek prefill gains far less from FP8 than a dense model's.
    bf16 = prefill_s(reference, "deepseek-v3", "h200", "bf16", Layout(8, expert=8), 8192)
    fp8 = prefill_s(reference, "deepseek-v3", "h200", "fp8", Layout(8, expert=8), 8192)
    dense_bf16 = prefill_s(reference, "llama-3.1-70b", "h200", "bf16", Layout(8), 8192)
    dense_fp8 = prefill_s(reference, "llama-3.1-70b", "h200", "fp8", Layout(8), 8192)
    assert bf16 / fp8 < dense_bf16 / dense_fp8


def test_the_tp8_mla_block_costs_what_the_tables_measure(reference: Catalog) -> None:
    # h200_sxm trtllm mla_context_module_perf, fp8_block GEMMs, FP8 cache, 16 heads, 1 x 2048 tokens: 0.3150 ms per
    # layer, a slow row of the curve's spread (its speed is below the rows' lower quartile, the band's slow end).
    model, h200 = llm(reference, "deepseek-v3"), gpu(reference, "h200")
    flops_per_gpu = mla.prefill_flops(model, 2048, 8) / 8 / model.layers

    def block_ms(scenario: Scenario) -> float:
        share = mla.prefill_mfu("hopper", 8, 16, scenario, EFFICIENCY["hopper"]["prefill_mfu"].at(scenario))
        assert share is not None
        return flops_per_gpu / (h200.tflops.bf16 * 1e12 * share) * 1e3

    assert block_ms("expected") < block_ms("pessimistic") < 0.3150
    assert block_ms("expected") == pytest.approx(0.3150, rel=0.15)


def test_data_parallel_attention_pays_no_replication(reference: Catalog) -> None:
    model = llm(reference, "deepseek-v3")
    assert mla.prefill_flops(model, 1024, 1) == pytest.approx(
        model.layers * (2 * 1024 * mla.block_params(model) + 2 * 1024**2 * model.attention_heads * model.head_dim)
    )


def test_an_untabled_family_s_8_bit_mla_block_gains_what_hopper_s_does_at_16_heads() -> None:
    # No table measures CDNA: its 8-bit block runs at Hopper's fp8_block speed at 16 heads, whatever its heads.
    for family in ("cdna3", "cdna4", "gaudi"):
        assert mla.prefill_speed(family, 8, 16, "expected") == mla.prefill_speed("hopper", 8, 16, "expected")
        assert mla.prefill_speed(family, 8, 128, "optimistic") == mla.UNTABLED_8_BIT.high


def test_an_fp8_deepseek_prefill_on_mi300x_gains_less_than_a_dense_model_s(reference: Catalog) -> None:
    # The compute alone (one GPU: no all-reduce, whose cost is the same in both precisions, dilutes either gain).
    bf16 = prefill_s(reference, "deepseek-v3", "mi300x", "bf16", Layout(1), 3200)
    fp8 = prefill_s(reference, "deepseek-v3", "mi300x", "fp8", Layout(1), 3200)
    dense_bf16 = prefill_s(reference, "llama-3.1-70b", "mi300x", "bf16", Layout(1), 3200)
    dense_fp8 = prefill_s(reference, "llama-3.1-70b", "mi300x", "fp8", Layout(1), 3200)
    assert bf16 / fp8 < 0.9 * dense_bf16 / dense_fp8


def test_a_refit_of_the_prefill_mfu_cannot_move_a_measured_block() -> None:
    # The curves are speeds over the rate the tables were read at; untabled families scale their own prefill MFU.
    assert mla.prefill_mfu("hopper", 8, 16, "expected", 0.5) == mla.prefill_mfu("hopper", 8, 16, "expected", 0.7)
    assert mla.prefill_mfu("cdna3", 8, 16, "expected", 0.7) == pytest.approx(
        0.7 / 0.5 * (mla.prefill_mfu("cdna3", 8, 16, "expected", 0.5) or 0.0)
    )
