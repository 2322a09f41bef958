"""The denoisers' GEMM shares (domain/performance/diffusion_gemms.py) from aiconfigurator-core's measured GEMM tables.

Each denoiser's layers are walked as GEMMs (convolutions as implicit GEMMs: M = latent positions x images x guidance
passes, N = output channels, K = input channels x kernel area; attention scores and values as GEMMs with K = head
dim and K = tokens), each timed at the 16-bit rate the tables measure for its (M, N, K) (interpolated in log2 of each,
clamped at the grid's ends; trtllm and vllm tables averaged), and the pass's rate is given over SDXL's at 1024x1024,
one image with guidance, per GPU family. Architectures from the models' diffusers configs:
runwayml/stable-diffusion-v1-5 unet/config.json (block_out_channels 320/640/1280/1280, 8 heads, cross-attention 768),
stabilityai/stable-diffusion-xl-base-1.0 unet/config.json (320/640/1280, transformer_layers_per_block 0/2/10,
64-dim heads, cross-attention 2048), stabilityai/stable-diffusion-3-medium-diffusers transformer/config.json
(24 joint blocks of 1536, 24 heads, patch 2), black-forest-labs/FLUX.1-dev transformer/config.json (19 double and 38
single blocks of 3072, 24 heads, patch 2, 512 text tokens). The walk's FLOPs per pass at the models' native sizes are
printed beside the catalog's figures as a check (norms and elementwise ops are not GEMMs: SD 1.5 walks to ~0.80 of
onnx-tool's 0.889 TFLOP).

    uv run --group calibration python bench/diffusion_gemms.py
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

SYSTEMS = {"ampere": "a100_sxm", "hopper": "h100_sxm", "ada": "l40s", "blackwell": "b200_sxm"}
Gemm = tuple[int, int, int]


def _resnet(out: list[Any], hw: int, cin: int, cout: int) -> None:
    out += [(hw, cout, cin * 9), (hw, cout, cout * 9)] + ([(hw, cout, cin)] if cin != cout else [])


def _transformer(out: list[Any], hw: int, c: int, depth: int, head: int, context: int, tokens: int = 77) -> None:
    out.append((hw, c, c))
    for _ in range(depth):
        out += [(hw, c, c)] * 3 + [("attn", hw, hw, head, c // head), (hw, c, c), (hw, c, c)]
        out += [(tokens, c, context)] * 2 + [("attn", hw, tokens, head, c // head), (hw, c, c)]
        out += [(hw, 8 * c, c), (hw, c, 4 * c)]  # GEGLU feed-forward
    out.append((hw, c, c))


def _unet(res: int, channels: list[int], depths: list[int], heads: int | None, head: int | None, ctx: int) -> list[Any]:
    """Down blocks of 2 ResNets, mid block, up blocks of 3 ResNets with the skips, transformers where depth > 0."""
    side = res // 8
    sizes = [(side >> i) ** 2 for i in range(len(channels))]
    out: list[Any] = [(sizes[0], channels[0], 36)]
    skips, cin = [channels[0]], channels[0]

    def attend(level: int) -> None:
        c = channels[level]
        if depths[level]:
            _transformer(out, sizes[level], c, depths[level], head or c // (heads or 1), ctx)

    for level, c in enumerate(channels):
        for _ in range(2):
            _resnet(out, sizes[level], cin, c)
            attend(level)
            cin = c
            skips.append(c)
        if level < len(channels) - 1:
            out.append((sizes[level + 1], c, c * 9))
            skips.append(c)
    last = len(channels) - 1
    _resnet(out, sizes[last], cin, cin)
    _transformer(out, sizes[last], cin, max(depths[last], 1), head or cin // (heads or 1), ctx)
    _resnet(out, sizes[last], cin, cin)
    for level in reversed(range(len(channels))):
        for _ in range(3):
            _resnet(out, sizes[level], cin + skips.pop(), channels[level])
            cin = channels[level]
            attend(level)
        if level:
            out.append((sizes[level - 1], cin, cin * 9))
    return out


def _dit(res: int, hidden: int, heads: int, double: int, single: int, text: int) -> list[Any]:
    image = (res // 16) ** 2
    out: list[Any] = []
    for _ in range(double):
        for t in (image, text):
            out += [(t, 3 * hidden, hidden), (t, hidden, hidden), (t, 4 * hidden, hidden), (t, hidden, 4 * hidden)]
        out.append(("attn", image + text, image + text, hidden // heads, heads))
    for _ in range(single):
        t = image + text
        out += [(t, 7 * hidden, hidden), (t, hidden, 5 * hidden), ("attn", t, t, hidden // heads, heads)]
    return out


MODELS: dict[str, tuple[Any, int, float]] = {  # walk, guidance passes per step, catalog TFLOP per pass at native size
    "sd-1.5": (lambda r: _unet(r, [320, 640, 1280, 1280], [1, 1, 1, 0], 8, None, 768), 2, 0.889),
    "sdxl": (lambda r: _unet(r, [320, 640, 1280], [0, 2, 10], None, 64, 2048), 2, 6.76),
    "sd3-medium": (lambda r: _dit(r, 1536, 24, 24, 0, 333), 2, float("nan")),
    "flux.1-dev": (lambda r: _dit(r, 3072, 24, 19, 38, 512), 1, 74.4),
}
NATIVE = {"sd-1.5": 512}


def _gemms(walk: list[Any], images: int) -> list[Gemm]:
    out: list[Gemm] = []
    for item in walk:
        if item[0] == "attn":
            _, query, keys, head, heads = item
            out += [(query * heads * images, keys, head), (query * heads * images, head, keys)]
        else:
            out.append((item[0] * images, item[1], item[2]))
    return out


def _rate_table(system: str, engine: str) -> Any:
    import numpy as np
    import pandas as pd
    from aiconfigurator_core import __file__ as package
    from scipy.interpolate import RegularGridInterpolator

    found = sorted(Path(package).parent.glob(f"systems/data/{system}/gemm/{engine}/*/gemm_perf.parquet"))[-1]
    frame = pd.read_parquet(found)
    frame = frame[frame.gemm_dtype.isin(["bfloat16", "float16"])].groupby(["m", "n", "k"]).latency.min().reset_index()
    axes = [sorted(frame[c].unique()) for c in "mnk"]
    grid = np.full([len(a) for a in axes], np.nan)
    index = [{v: i for i, v in enumerate(a)} for a in axes]
    for row in frame.itertuples():
        grid[index[0][row.m], index[1][row.n], index[2][row.k]] = 2 * row.m * row.n * row.k / (row.latency * 1e-3)
    grid = np.where(np.isnan(grid), np.nanmean(grid), grid)
    logs = [np.log2(np.array(a, dtype=float)) for a in axes]
    interpolate = RegularGridInterpolator(logs, grid, bounds_error=False, fill_value=None)

    def rate(m: int, n: int, k: int) -> float:
        point = [min(max(math.log2(v), a[0]), a[-1]) for v, a in zip((m, n, k), logs, strict=True)]
        return float(interpolate([point])[0])

    return rate


def _pass_rate(rates: list[Any], gemms: list[Gemm]) -> float:
    flops = sum(2.0 * m * n * k for m, n, k in gemms)
    seconds = [sum(2.0 * m * n * k / rate(m, n, k) for m, n, k in gemms) for rate in rates]
    return flops / (sum(seconds) / len(seconds))


def main() -> None:
    for model, (walk, _, tflop) in MODELS.items():
        native = NATIVE.get(model, 1024)
        walked = sum(2.0 * m * n * k for m, n, k in _gemms(walk(native), 1)) / 1e12
        print(f"# {model}: walk {walked:.3f} TFLOP per pass at {native} px (catalog {tflop:g})")
    for family, system in SYSTEMS.items():
        rates = [_rate_table(system, engine) for engine in ("trtllm", "vllm")]
        reference = _pass_rate(rates, _gemms(MODELS["sdxl"][0](1024), 2))
        for model, (walk, passes, _) in MODELS.items():
            shares = [
                round(_pass_rate(rates, _gemms(walk(res), images * passes)) / reference, 3)
                for res in (512, 1024)
                for images in (1, 8)
            ]
            print(f'    ("{model}", "{family}"): {tuple(shares)},')


if __name__ == "__main__":
    main()
