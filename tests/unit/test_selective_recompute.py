"""Per-op selective checkpointing recomputes every second forward GEMM: a measured run pays for it, the model too."""

from __future__ import annotations

import msgspec

from api.adapters.storage.reference import calibration_points
from domain.calibration.harness import reproduce
from domain.calibration.points import CalibrationPoint
from domain.catalog import Catalog

# torchtitan's per-op policy saves every compute op's output "except every second mm" (torchtitan
# parallelize_llama.py): half the forward GEMMs run again in the backward, 2 of 6 FLOPs per parameter halved.
HALF_FORWARD = 1 + 0.5 * 2 / 6


def _point(**changes: object) -> CalibrationPoint:
    base = {
        "id": "selective-recompute-probe",
        "kind": "training",
        "gpu": "h100-sxm",
        "gpu_count": 8,
        "model": "llama-3.1-8b",
        "precision": "bf16",
        "sequence_length": 8192,
        "metric": "tokens_per_s_per_gpu",
        "value": 1.0,
        "date": "2025-03-01",
        "source": "https://example.org/probe",
    }
    return msgspec.convert({**base, **changes}, CalibrationPoint)


def test_half_the_forward_recomputed_costs_about_a_sixth_of_the_step(reference: Catalog) -> None:
    plain = reproduce(reference, _point()).expected
    selective = reproduce(reference, _point(recompute_share=0.5)).expected
    full = reproduce(reference, _point(recompute=True)).expected
    # Slower than no recomputation by about half of what recomputing every layer costs.
    assert plain / selective > 1.1
    assert plain / selective < plain / full
    assert abs(plain / selective - HALF_FORWARD) < 0.03


def test_the_runs_that_state_per_op_checkpointing_say_so() -> None:
    stated = [point for point in calibration_points() if "per-op SAC" in point.quote]
    assert stated
    assert all(point.recompute_share == 0.5 and not point.recompute for point in stated)
