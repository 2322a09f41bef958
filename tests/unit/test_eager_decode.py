"""TensorRT-LLM's PyTorch backend before CUDA graphs by default: each eager decode step pays host time per layer."""

from __future__ import annotations

from datetime import date

import msgspec
import pytest

from api.adapters.storage.reference import calibration_points
from domain.calibration.harness import reproduce
from domain.catalog import Catalog
from domain.performance.engine_releases import decode_host_seconds
from domain.performance.release_history import EAGER_MLA_LAYER_HOST_US
from tests.conftest import llm

WHEN = date(2025, 3, 18)


def test_an_eager_mla_step_pays_host_time_per_layer(reference: Catalog) -> None:
    deepseek = llm(reference, "deepseek-r1")
    assert round(EAGER_MLA_LAYER_HOST_US) == 691
    assert decode_host_seconds(deepseek, "trtllm", "0.17.post1.dev", WHEN, "hopper") == pytest.approx(
        61 * 691e-6, rel=1e-3
    )
    # Releases with CUDA graphs by default, other engines and non-MLA models pay nothing.
    assert decode_host_seconds(deepseek, "trtllm", "1.0.0", WHEN, "hopper") == 0.0
    assert decode_host_seconds(deepseek, "trtllm", "", date(2025, 11, 1), "hopper") == 0.0
    assert decode_host_seconds(deepseek, "vllm", "0.7.3", WHEN, "hopper") == 0.0
    assert decode_host_seconds(llm(reference, "llama-2-70b"), "trtllm", "0.6.1", WHEN, "hopper") == 0.0


def test_the_eager_release_reproduces_its_low_concurrency_sweep(reference: Catalog) -> None:
    # At 4 users the measured step is host-bound: without the host time the model is several times too fast.
    old = next(p for p in calibration_points() if p.id == "dstack-2025-03-r1-h200-trtllm-3200-800-c4")
    today = msgspec.structs.replace(old, engine_version="1.0.0")
    assert abs(reproduce(reference, old).error) < 0.15
    assert reproduce(reference, today).expected > 3 * old.value
