"""Denoiser GEMM shapes: the share of an SDXL pass's measured GEMM rate a denoiser's own layers reach on a family."""

from __future__ import annotations

import math

from domain.catalog import DiffusionModel, Gpu
from domain.hardware.efficiency import KERNELS, Family, family_of

# A pass's layers are GEMMs of very different shapes: SD 1.5 at 512x512 spends most of its FLOPs at 320-640 channels
# (attention heads of 40-80 dims over 4,096 latent tokens), SDXL at 1024x1024 in 1280-channel transformer blocks over
# 1,024 tokens with 64-dim heads, FLUX.1 in 3,072-wide blocks over 1,536-4,608 tokens. Walking each denoiser's layers
# (convolutions as implicit GEMMs, M = latent positions x images x guidance passes, N = output channels, K = input
# channels x kernel area; attention scores and values as GEMMs of K = head dim and K = tokens) through the measured
# 16-bit GEMM tables (bench/diffusion_gemms.py; trtllm and vllm tables averaged) gives each pass's rate as a share of
# SDXL's at 1024x1024, batch 1 with guidance: what diffusion_mfu is fitted to. Grid: 512 and 1024 px, 1 and 8 images
# a batch; interpolated in log2 of each, clamped at the ends. Families and models not in the grid keep share 1.
SOURCE = (
    f"{KERNELS} 0.12.0: systems/data/{{a100_sxm,h100_sxm,l40s,b200_sxm}}/gemm/{{trtllm,vllm}}/*/gemm_perf.parquet, "
    "bfloat16, through each denoiser's layer shapes (bench/diffusion_gemms.py)"
)
# (model id, family) -> share at (512 px x 1 image, 512 x 8, 1024 x 1, 1024 x 8).
GEMM_SHARE: dict[tuple[str, Family], tuple[float, float, float, float]] = {
    ("sd-1.5", "ampere"): (0.742, 0.826, 0.586, 0.591),
    ("sdxl", "ampere"): (0.859, 1.106, 1.0, 1.037),
    ("sd3-medium", "ampere"): (1.061, 1.141, 0.848, 0.856),
    ("flux.1-dev", "ampere"): (1.414, 1.423, 1.258, 1.263),
    ("sd-1.5", "hopper"): (0.646, 0.821, 0.496, 0.504),
    ("sdxl", "hopper"): (0.755, 1.282, 1.0, 1.092),
    ("sd3-medium", "hopper"): (1.003, 1.063, 0.759, 0.768),
    ("flux.1-dev", "hopper"): (1.477, 1.451, 1.279, 1.306),
    ("sd-1.5", "ada"): (0.658, 0.712, 0.398, 0.398),
    ("sdxl", "ada"): (0.972, 1.304, 1.0, 1.021),
    ("sd3-medium", "ada"): (1.035, 1.015, 0.618, 0.599),
    ("flux.1-dev", "ada"): (1.245, 1.321, 1.137, 1.045),
    ("sd-1.5", "blackwell"): (0.605, 0.842, 0.548, 0.564),
    ("sdxl", "blackwell"): (0.644, 1.235, 1.0, 1.142),
    ("sd3-medium", "blackwell"): (1.104, 1.242, 0.844, 0.862),
    ("flux.1-dev", "blackwell"): (1.469, 1.509, 1.322, 1.357),
}
# Models sharing a denoiser with one in the grid.
SAME_DENOISER = {"flux.1-schnell": "flux.1-dev"}


def _position(value: float, low: float, high: float) -> float:
    return min(1.0, max(0.0, math.log2(value / low) / math.log2(high / low)))


def gemm_share(model: DiffusionModel, on: Gpu | Family, width: int, height: int, images: int) -> float:
    """The pass's GEMM rate over SDXL's at 1024x1024 (1 where no table or layer walk covers the model)."""
    family = on if isinstance(on, str) else family_of(on)
    grid = GEMM_SHARE.get((SAME_DENOISER.get(model.id, model.id), family))
    if grid is None:
        return 1.0
    size = _position(math.sqrt(width * height), 512, 1024)
    batch = _position(max(1, images), 1, 8)
    small = grid[0] + (grid[1] - grid[0]) * batch
    large = grid[2] + (grid[3] - grid[2]) * batch
    return small + (large - small) * size
