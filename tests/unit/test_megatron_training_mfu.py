"""Training speed is that of the Megatron-LM / Transformer Engine stack an estimate's launch command runs."""

from __future__ import annotations

import pytest

from domain.catalog import Catalog
from domain.performance.training import TrainingSpeed
from domain.performance.training_flops import training_flops_per_token
from tests.conftest import gpu, llm

H100_BF16_FLOPS = 989e12

# NVIDIA's DGX Cloud benchmarking recipes, NeMo 24.09 on H100 at sequence 8192, one layout per model for BF16 and FP8
# (github.com/NVIDIA/dgxc-benchmarking/blob/143b90dd91f9be958fed4773ae95d941a3356a82/llama3.1/README_8b.md,
# README_70b.md, README_405b.md): (model, GPUs, TP, PP, CP, BF16 MFU, BF16 / FP8 seconds per step).
PUBLISHED = [
    ("llama-3.1-8b", 8, 1, 1, 2, 0.5937, 12.91 / 9.67),
    ("llama-3.1-70b", 64, 4, 4, 2, 0.5410, 14.72 / 11.01),
    ("llama-3.1-405b", 576, 8, 9, 2, 0.5578, 17.20 / 11.24),
]


def _tokens_per_s(reference: Catalog, model_id: str, precision: str, layout: tuple[int, int, int, int]) -> float:
    gpus, tensor, pipeline, context = layout
    speed = TrainingSpeed(
        llm(reference, model_id),
        gpu(reference, "h100-sxm"),
        method="full",
        precision=precision,
        train_tokens=1e11,
        sequence_length=8192,
        scenario="expected",
    )
    return speed.run(gpus, tensor, 8, 0, pipeline, 1, context=context).tokens_per_s


@pytest.mark.parametrize(("model_id", "gpus", "tensor", "pipeline", "context", "mfu", "gain"), PUBLISHED)
def test_bf16_pretraining_reaches_the_stacks_published_utilization(
    reference: Catalog, model_id: str, gpus: int, tensor: int, pipeline: int, context: int, mfu: float, gain: float
) -> None:
    tokens = _tokens_per_s(reference, model_id, "bf16", (gpus, tensor, pipeline, context))
    estimated = tokens * training_flops_per_token(llm(reference, model_id), 8192) / (gpus * H100_BF16_FLOPS)
    assert abs(estimated / mfu - 1) < 0.12, (estimated, mfu)


@pytest.mark.parametrize(("model_id", "gpus", "tensor", "pipeline", "context", "mfu", "gain"), PUBLISHED)
def test_fp8_gains_what_the_same_runs_gained_not_the_peak_ratio(
    reference: Catalog, model_id: str, gpus: int, tensor: int, pipeline: int, context: int, mfu: float, gain: float
) -> None:
    layout = (gpus, tensor, pipeline, context)
    estimated = _tokens_per_s(reference, model_id, "fp8", layout) / _tokens_per_s(reference, model_id, "bf16", layout)
    assert abs(estimated / gain - 1) < 0.10, (estimated, gain)
    assert estimated < 1.7
