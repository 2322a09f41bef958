"""FP8 training: only the linear layers' GEMMs run at the FP8 rate; attention, norms, casts and exchanges do not."""

from __future__ import annotations

from domain.catalog import Gpu, LlmModel
from domain.hardware.efficiency import Scenario, shared
from domain.hardware.peaks import compute_tflops
from domain.performance.memory import matmul_params
from domain.performance.training_flops import linear_flops_per_param, training_flops_per_token


def gemm_time_share(model: LlmModel, sequence_length: int, scenario: Scenario) -> float:
    """Share of a 16-bit training step spent in the linear layers' GEMMs (the part FP8 speeds up)."""
    # Their FLOPs' share of the step's matmul FLOPs (attention runs in 16 bits under FlashAttention) times d / (d + D):
    # the rest of the step is memory-bound work per hidden unit (norms, activations, residuals, casts, exposed
    # exchanges) whose time against the GEMMs' falls as 1 / d. D is fp8_train_other_work (domain/data/factors.toml).
    linear = linear_flops_per_param("full") * matmul_params(model)
    hidden = float(model.hidden_size)
    share = linear / training_flops_per_token(model, sequence_length)
    return share * hidden / (hidden + shared("fp8_train_other_work").at(scenario))


def low_precision_speedup(model: LlmModel, gpu: Gpu, precision: str, sequence_length: int, scenario: Scenario) -> float:
    """How much faster a training step runs in `precision` (fp8, fp4) than in 16-bit: Amdahl over the GEMM share."""
    half = compute_tflops(gpu, "bf16")
    low = compute_tflops(gpu, precision)
    if not half or not low or low <= half:
        return 1.0
    share = gemm_time_share(model, sequence_length, scenario)
    return 1.0 / (1.0 - share + share * half / low)
