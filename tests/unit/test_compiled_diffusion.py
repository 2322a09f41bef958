"""Compiled diffusion runtimes: each computes its own measured share faster than eager."""

from __future__ import annotations

from api.adapters.storage.reference import calibration_points
from domain.calibration.harness import reproduce
from domain.catalog import Catalog
from domain.hardware.efficiency import shared
from domain.performance.images import seconds_per_image
from tests.conftest import gpu


def test_onnxruntime_cuda_gains_less_over_eager_than_tensorrt(reference: Catalog) -> None:
    t4 = gpu(reference, "t4")
    compiled, ort_cuda = shared("compiled_diffusion"), shared("ort_cuda_diffusion")
    # Compute-bound (no floor): 50 steps x 2 passes of a large image.
    eager = seconds_per_image(500.0, t4, "fp16", "expected", 100)
    tensorrt = seconds_per_image(500.0, t4, "fp16", "expected", 100, compiled=True)
    ort = seconds_per_image(500.0, t4, "fp16", "expected", 100, compiled=True, speedup=ort_cuda)
    assert tensorrt < ort < eager
    assert eager / ort == ort_cuda.expected
    assert eager / tensorrt == compiled.expected


def test_gaudi2_images_come_at_the_rate_optimum_habana_measures(reference: Catalog) -> None:
    # Every Gaudi measurement runs Optimum Habana: its published Gaudi2 rate is the planner's, with no compiled bonus.
    points = {p.id: p for p in calibration_points()}
    for point_id, within in (
        ("diffusers-docs-sd15-gaudi2-optimum-habana-bs8", 0.05),
        ("hf-blog-2022-12-sd-gaudi2-optimum-habana-bs4", 0.30),
    ):
        assert abs(reproduce(reference, points[point_id]).error) <= within, point_id
