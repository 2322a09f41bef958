"""Dense peaks: the tensor-core rate a precision computes at on a GPU (datasheet dense figures, never 2:4 sparse)."""

from __future__ import annotations

from domain.catalog import Gpu


def compute_tflops(gpu: Gpu, precision: str) -> float | None:
    """Dense peak for the arithmetic a precision runs in; None when the GPU cannot run it at all."""
    # Weight-only int4/fp4 computes in 16-bit unless the GPU has FP4 tensor cores; GPUs without BF16 run FP16.
    t = gpu.tflops
    half = t.bf16 or t.fp16
    if precision in ("bf16", "fp16"):
        return half or t.fp32
    if precision == "fp32":
        return t.tf32 or t.fp32
    if precision == "fp8":
        return t.fp8
    if precision == "int8":
        return t.int8 if half else None
    if precision == "fp4" and t.fp4:
        return t.fp4
    return half  # weight-only int4/fp4: 16-bit tensor cores needed
