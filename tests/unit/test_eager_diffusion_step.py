"""ONNX Runtime before its CUDA-graphed Stable Diffusion pipeline: each denoising step pays host time for launches."""

from __future__ import annotations

from datetime import date

import msgspec
import pytest

from api.adapters.storage.reference import calibration_points
from domain.calibration.harness import reproduce
from domain.catalog import Catalog
from domain.performance.engine_releases import diffusion_step_host_seconds
from domain.performance.release_history import EAGER_DIFFUSION_STEP_HOST_US

WHEN = date(2023, 7, 1)


def test_an_ungraphed_denoising_step_pays_host_time() -> None:
    assert round(EAGER_DIFFUSION_STEP_HOST_US, 3) == 1400.0
    assert diffusion_step_host_seconds("onnxruntime", "1.14.1", WHEN) == pytest.approx(1.4e-3)
    # Releases with the CUDA-graphed pipeline, and other engines, pay nothing.
    assert diffusion_step_host_seconds("onnxruntime", "1.16.0", WHEN) == 0.0
    assert diffusion_step_host_seconds("onnxruntime", "", date(2024, 1, 1)) == 0.0
    assert diffusion_step_host_seconds("diffusers", "0.14.0", WHEN) == 0.0


def test_the_batch_shares_the_step_host_time(reference: Catalog) -> None:
    point = next(p for p in calibration_points() if p.engine == "onnxruntime" and p.engine_version == "1.14.1")
    current = msgspec.structs.replace(point, engine_version="1.16.0")
    extra = reproduce(reference, point).expected - reproduce(reference, current).expected
    assert extra == pytest.approx(point.steps * 1.4e-3 / point.batch)
    batch4 = msgspec.structs.replace(point, batch=4)
    current4 = msgspec.structs.replace(batch4, engine_version="1.16.0")
    assert reproduce(reference, batch4).expected - reproduce(reference, current4).expected == pytest.approx(extra / 4)
