"""MoE and MLA serving costs: per-kernel rooflines, 16-bit attention, block-scaled FP8 and old 4-bit expert kernels."""

from __future__ import annotations

from datetime import date

import msgspec
import pytest

from api.adapters.storage.reference import calibration_points
from domain.calibration.harness import reproduce
from domain.catalog import Catalog
from domain.hardware.efficiency import BLOCK_FP8_MOE
from domain.hardware.peaks import compute_tflops
from domain.performance.engine_releases import decode_slowdown
from domain.performance.layout import Layout
from domain.performance.memory import experts_touched
from domain.performance.serving import InstanceSpeed
from tests.conftest import gpu, llm


def speed(catalog: Catalog, model_id: str, gpu_id: str, precision: str, layout: Layout, isl: int) -> InstanceSpeed:
    return InstanceSpeed(llm(catalog, model_id), gpu(catalog, gpu_id), precision, "bf16", layout, isl, 1024)


def test_a_large_batch_pays_its_cache_read_on_top_of_its_gemms(reference: Catalog) -> None:
    # The attention kernel and the expert GEMMs run one after the other: a compute-bound step does not hide the
    # KV cache behind its GEMMs.
    short = speed(reference, "gpt-oss-20b", "h100-sxm", "fp4", Layout(1), 8)
    long = speed(reference, "gpt-oss-20b", "h100-sxm", "fp4", Layout(1), 8192)
    batch = 256
    assert short.step(batch, "expected")[1] == "compute"
    kv_bytes = batch * (long.kv_bytes_per_sequence - short.kv_bytes_per_sequence)
    kv_read = kv_bytes / (long.bandwidth * long._mbu("expected", long.doublings))
    grown = long.step(batch, "expected")[0] - short.step(batch, "expected")[0]
    assert grown == pytest.approx(kv_read, rel=0.05)


def test_decode_attention_runs_at_the_16_bit_rate_whatever_the_weights(reference: Catalog) -> None:
    h200 = gpu(reference, "h200")
    fp8 = speed(reference, "deepseek-v3", "h200", "fp8", Layout(8), 1024)
    bf16 = speed(reference, "deepseek-v3", "h200", "bf16", Layout(8), 1024)
    assert fp8.attention_peak_flops == bf16.attention_peak_flops == (compute_tflops(h200, "bf16") or 0) * 1e12
    assert fp8.peak_flops == pytest.approx(2 * fp8.attention_peak_flops, rel=0.01)


def routed_prefill_s(instance: InstanceSpeed, tokens: int) -> float:
    return instance._expert_rows(experts_touched(instance.model, tokens), "expected", tokens)


def test_block_scaled_fp8_experts_run_at_their_measured_share(reference: Catalog) -> None:
    # DeepSeek's checkpoint is block-scaled FP8 (HF quant_method fp8); the same shape as a bf16 checkpoint quantised
    # per tensor runs its experts at the per-tensor rate.
    deepseek = llm(reference, "deepseek-v3")
    per_tensor = msgspec.structs.replace(deepseek, native_precision="bf16")
    layout, tokens = Layout(8, expert=8), 16384
    for gpu_id in ("h200", "b200"):
        share = BLOCK_FP8_MOE["hopper" if gpu_id == "h200" else "blackwell"].expected
        block = InstanceSpeed(deepseek, gpu(reference, gpu_id), "fp8", "fp8", layout, tokens, 1)
        plain = InstanceSpeed(per_tensor, gpu(reference, gpu_id), "fp8", "fp8", layout, tokens, 1)
        extra = routed_prefill_s(block, tokens) - routed_prefill_s(plain, tokens)
        assert extra == pytest.approx(tokens * plain.routed_flops * (1 / share - 1))
        assert block.prefill("expected")[0] > plain.prefill("expected")[0]
    # No tables for CDNA 3: its experts run at the per-tensor rate; bf16 weights are not block-scaled.
    for gpu_id, precision in (("mi300x", "fp8"), ("h200", "bf16")):
        block = InstanceSpeed(deepseek, gpu(reference, gpu_id), precision, "bf16", layout, tokens, 1)
        plain = InstanceSpeed(per_tensor, gpu(reference, gpu_id), precision, "bf16", layout, tokens, 1)
        assert block.prefill("expected") == plain.prefill("expected")


def test_vllm_before_0_8_ran_4_bit_experts_through_the_triton_kernel(reference: Catalog) -> None:
    deepseek, dense = llm(reference, "deepseek-v3"), llm(reference, "llama-3.1-70b")
    when = date(2025, 3, 1)
    # The end-to-end gain of vllm-project/vllm#13321 by batch, none past 256 sequences or in 0.8 and later.
    assert decode_slowdown(deepseek, "int4", "vllm", "0.7.3", when, 1) == pytest.approx(48.1 / 34.1)
    assert decode_slowdown(deepseek, "int4", "vllm", "0.7.3", when, 100) == pytest.approx(495.7 / 262.7)
    assert decode_slowdown(deepseek, "int4", "vllm", "0.7.3", when, 512) == 1.0
    assert decode_slowdown(deepseek, "int4", "vllm", "0.8.0", when, 1) == 1.0
    # FP8 experts, dense models and other engines never took that path.
    assert decode_slowdown(deepseek, "fp8", "vllm", "0.7.3", when, 1) == 1.0
    assert decode_slowdown(dense, "int4", "vllm", "0.7.3", when, 1) == 1.0
    assert decode_slowdown(deepseek, "int4", "sglang", "0.4.3", when, 1) == 1.0
    old = next(p for p in calibration_points() if p.id == "dzhsurf-2025-03-dsv3-awq-h100-vllm-1024-256-c100")
    today = msgspec.structs.replace(old, engine_version="")
    assert reproduce(reference, old).expected < 0.7 * reproduce(reference, today).expected


def test_expert_parallelism_reads_each_expert_whole(reference: Catalog) -> None:
    # Shards shrink a GEMV below what saturates HBM; expert parallelism gives each GPU whole experts, so only weights
    # split across GPUs pay the per-doubling decay (the attention weights unless attention runs data parallel).
    tp = speed(reference, "deepseek-v3", "h200", "bf16", Layout(8), 1024)
    ep = speed(reference, "deepseek-v3", "h200", "bf16", Layout(8, expert=8), 1024)
    dep = speed(reference, "deepseek-v3", "h200", "bf16", Layout(1, expert=8, dp_attention=True), 1024)
    dense = speed(reference, "llama-3.1-70b", "h200", "bf16", Layout(8), 1024)
    assert (tp.expert_doublings, ep.expert_doublings, dep.expert_doublings) == (3, 0, 0)
    assert (tp.base_doublings, ep.base_doublings, dep.base_doublings) == (3, 3, 0)
    assert dense.base_doublings == dense.doublings == 3
    whole = ep.mbu.at("expected") * ep.engine_speedup
    assert ep._mbu("expected", ep.expert_doublings) == whole > ep._mbu("expected", ep.base_doublings)
    # Batch 64 is memory-bound here: whole experts make the expert-parallel step faster than the tensor-parallel one.
    assert ep.step(64, "expected")[0] < tp.step(64, "expected")[0]
