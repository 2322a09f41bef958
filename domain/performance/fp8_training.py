"""FP8 training: only the linear layers' GEMMs run at the FP8 rate; attention, norms, casts and exchanges do not."""

from __future__ import annotations

from domain.catalog import Gpu, LlmModel
from domain.hardware.efficiency import Factor, Scenario
from domain.hardware.peaks import compute_tflops
from domain.performance.memory import matmul_params

# Share of a 16-bit training step spent in the linear layers' GEMMs: their FLOPs' share of the step's matmul FLOPs
# (6N against attention's 12 x layers x d x S, which FlashAttention runs in 16-bit) times d / (d + D), the rest of the
# step being memory-bound work per hidden unit (norms, activations, residuals, casts, exposed exchanges) whose time
# against the GEMMs' falls as 1 / d. D is identified from three published FP8 over BF16 end-to-end speedups on H100,
# each read with the GEMMs at the FP8 / BF16 peak ratio (2x): torchtitan Llama 3 8B, 8 GPUs, sequence 8192:
# 6150 -> 7689.5 tokens/s (1.25x, D 4,000) and Llama 3 405B, 512 GPUs: "up to 1.5x" (D 6,300)
# (github.com/pytorch/ao/blob/main/torchao/float8/README.md); Megatron-LM GPT 13B with Transformer Engine,
# 0.34 -> 0.24 s per step (1.42x, sequence 2048 assumed, D 3,060) (github.com/NVIDIA/Megatron-LM/issues/396).
OTHER_WORK_HIDDEN = Factor(
    4000,
    3060,
    6300,
    "FP8 over BF16 training speedups on H100: Llama 3 8B 1.25x (6150 -> 7689.5 tokens/s) and 405B up to 1.5x "
    "(github.com/pytorch/ao/blob/main/torchao/float8/README.md); GPT 13B 0.34 -> 0.24 s/step "
    "(github.com/NVIDIA/Megatron-LM/issues/396)",
    higher_is_faster=False,
)


def gemm_time_share(model: LlmModel, sequence_length: int, scenario: Scenario) -> float:
    """Share of a 16-bit training step spent in the linear layers' GEMMs (the part FP8 speeds up)."""
    linear = 6.0 * matmul_params(model)
    attention = 12.0 * model.layers * model.hidden_size * sequence_length
    hidden = float(model.hidden_size)
    return linear / (linear + attention) * hidden / (hidden + OTHER_WORK_HIDDEN.at(scenario))


def low_precision_speedup(model: LlmModel, gpu: Gpu, precision: str, sequence_length: int, scenario: Scenario) -> float:
    """How much faster a training step runs in `precision` (fp8, fp4) than in 16-bit: Amdahl over the GEMM share."""
    half = compute_tflops(gpu, "bf16")
    low = compute_tflops(gpu, precision)
    if not half or not low or low <= half:
        return 1.0
    share = gemm_time_share(model, sequence_length, scenario)
    return 1.0 / (1.0 - share + share * half / low)
