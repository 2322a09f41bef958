"""Image-generation run times: per-image FLOPs at the efficiency table's factors, no pass faster than a floor."""

from __future__ import annotations

from domain.catalog import DiffusionModel, Gpu
from domain.hardware.efficiency import COMPILED_DIFFUSION_FLOOR, Factor, FactorUse, Scenario, factor, shared
from domain.hardware.peaks import compute_tflops
from domain.performance.diffusion_gemms import gemm_share
from domain.performance.memory import diffusion_scale

# FLOPs per parameter of one denoiser pass at 1024x1024 where the model card gives none: SDXL's UNet (6.76 TFLOP,
# 2.567B) and FLUX.1's transformer (74.4 TFLOP, 11.9B).
UNET_FLOP_PER_PARAM = 6.76e12 / 2.567e9
DIT_FLOP_PER_PARAM = 74.4e12 / 11.9e9
VAE_DECODE_TFLOP_1024 = 10.5


def denoiser_tflop_per_pass(model: DiffusionModel) -> float:
    """TFLOP of one denoiser pass at 1024x1024: the model card's figure, else scaled from SDXL or FLUX.1."""
    if model.tflop_per_pass_1024:
        return model.tflop_per_pass_1024
    per_param = UNET_FLOP_PER_PARAM if "unet" in model.denoiser.architecture.lower() else DIT_FLOP_PER_PARAM
    return model.denoiser.params_b * 1e9 * per_param / 1e12


def image_tflop(model: DiffusionModel, width: int, height: int, steps: int) -> float:
    """TFLOP per image: steps x passes x denoiser pass, plus the VAE decode."""
    scale = diffusion_scale(width, height)
    vae = model.vae_decode_tflop_1024 or VAE_DECODE_TFLOP_1024
    return (steps * model.passes_per_step * denoiser_tflop_per_pass(model) + vae) * scale


def image_seconds(
    model: DiffusionModel, gpu: Gpu, precision: str, width: int, height: int, steps: int, scenario: Scenario
) -> float:
    """Seconds per image on one GPU: compute-bound from batch 1 at these sizes."""
    passes = steps * model.passes_per_step
    tflop, share = image_tflop(model, width, height, steps), gemm_share(model, gpu, width, height, 1)
    return seconds_per_image(tflop, gpu, precision, scenario, passes, gemm_share=share)


def seconds_per_image(
    tflop: float,
    gpu: Gpu,
    precision: str,
    scenario: Scenario,
    passes: int = 0,
    *,
    compiled: bool = False,
    batch: int = 1,
    speedup: Factor | None = None,
    gemm_share: float = 1.0,
) -> float:
    """Seconds for an image of `tflop` TFLOP (`image_tflop`) on one GPU, no denoiser pass faster than a floor."""
    # With `passes` denoiser passes, none is faster than the per-pass floor: small models at small sizes are bound by
    # kernel launches, not FLOPs. A batch shares the floor and a compiled graph (TensorRT, ONNX Runtime, torch.compile)
    # shortens it, computing `speedup` x faster than eager.
    peak = compute_tflops(gpu, precision) or 1.0
    rate, share, floor, gain = _image_factors(gpu, precision, compiled, speedup)
    mfu = rate.at(scenario) * gemm_share  # the denoiser's GEMM shapes against SDXL's pass (diffusion_gemms.py)
    if share is not None:
        mfu *= share.at(scenario)
    floor_ms = floor.at(scenario)
    if gain is not None:
        mfu *= gain.at(scenario)
        floor_ms /= COMPILED_DIFFUSION_FLOOR
    return max(tflop / (peak * mfu), passes * floor_ms * 1e-3 / batch)


def _image_factors(
    gpu: Gpu, precision: str, compiled: bool, speedup: Factor | None
) -> tuple[Factor, Factor | None, Factor, Factor | None]:
    """The denoiser's MFU, its 8-bit gain, the per-pass floor and a compiled graph's gain (None where none applies)."""
    share = shared("fp8_prefill") if precision in ("fp8", "int8") else None
    gain = (speedup or shared("compiled_diffusion")) if compiled else None
    return factor(gpu, "diffusion_mfu"), share, shared("diffusion_pass_floor_ms"), gain


def image_factors(
    gpu: Gpu, precision: str, *, compiled: bool = False, speedup: Factor | None = None
) -> tuple[FactorUse, ...]:
    """The factors `seconds_per_image` reads for this GPU and precision, as an estimate states them."""
    used = [item for item in _image_factors(gpu, precision, compiled, speedup) if item is not None]
    return tuple(FactorUse(item.name, item.family, precision, item) for item in used)
