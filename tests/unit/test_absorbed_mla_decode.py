"""vLLM V0 before 0.8 decoded MLA models with absorbed up-projections: larger weights read every step."""

from __future__ import annotations

from datetime import date

import msgspec
import pytest

from api.adapters.storage.reference import calibration_points
from domain.calibration.harness import reproduce
from domain.catalog import Catalog
from domain.performance.engine_releases import absorbed_decode
from domain.performance.mla import absorbed_decode_params
from tests.conftest import llm

WHEN = date(2025, 3, 3)


def test_absorbed_products_have_deepseek_v3_shapes(reference: Catalog) -> None:
    absorbed, rope, replaced = absorbed_decode_params(llm(reference, "deepseek-v3"))
    assert absorbed == 1536 * 128 * 512 + 128 * 512 * 7168
    assert rope == 1536 * 128 * 64
    assert replaced == pytest.approx(172e6, rel=0.01)  # q_b_proj + kv_b_proj + o_proj
    assert absorbed_decode_params(llm(reference, "llama-2-70b")) == (0.0, 0.0, 0.0)


def test_only_old_vllm_reads_the_absorbed_weights(reference: Catalog) -> None:
    deepseek = llm(reference, "deepseek-v3")
    w4_bytes, params = absorbed_decode(deepseek, "int4", "vllm", "0.7.3", WHEN)
    fp8_bytes, _ = absorbed_decode(deepseek, "fp8", "vllm", "0.7.3.dev138", WHEN)
    # 16-bit products for an AWQ checkpoint, FP8 ones for an FP8 checkpoint; tens of GB over 61 layers.
    assert w4_bytes > 2 * fp8_bytes > 40e9
    assert params == pytest.approx(61 * (570.4e6 + 12.6e6 - 172e6), rel=0.01)
    assert absorbed_decode(deepseek, "int4", "vllm", "0.8.0", WHEN) == (0.0, 0.0)
    assert absorbed_decode(deepseek, "fp8", "sglang", "0.4.3", WHEN) == (0.0, 0.0)


def test_the_absorbed_weights_bring_the_awq_batch_one_point_closer(reference: Catalog) -> None:
    old = next(p for p in calibration_points() if p.id == "dzhsurf-2025-03-dsv3-awq-h100-vllm-1024-256-c1")
    # Without absorption (and the Triton MoE kernel, both gone in 0.8.0) the model is 1.7x faster; without the
    # absorbed weights this point was +227%.
    without = msgspec.structs.replace(old, engine_version="0.8.0")
    assert reproduce(reference, old).error < 1.0
    assert reproduce(reference, without).expected > 1.5 * reproduce(reference, old).expected
