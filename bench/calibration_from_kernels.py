"""Calibration points from aiconfigurator-core's measured kernel tables: pure decode steps and prefills.

Run from the repository root (the package is in the optional dependency group `calibration`):

    uv run --group calibration python bench/calibration_from_kernels.py              # print the TOML
    uv run --group calibration python bench/calibration_from_kernels.py --write      # regenerate the data file
    uv run --group calibration python bench/calibration_from_kernels.py --allreduce  # per-all-reduce latencies

What it does: for each setup in SETUPS (GPU system, engine, model, precision, tensor parallel size, batch, lengths)
it compiles the package's engine (`aiconfigurator_core.sdk.engine.EngineHandle.compile`, which walks the model's
op graph and looks every GEMM, attention, all-reduce and MoE op up in the measured tables of that system and
engine version) and asks it for

- `decode_step_latency(batch, isl, osl)`: ONE generation-only step (no prefill tokens in it) with `batch`
  sequences at context `isl + osl // 2 + 1` (metric `decode_step_ms`), not the aggregated TPOT;
- `predict_prefill_latency(batch, isl)`: one prefill of `batch` sequences of `isl` tokens (metric `prefill_ms`).

Precision: bf16, or FP8 GEMMs as the published FP8 checkpoints quantize them (per-tensor for Llama, block-scaled
for Qwen3 and DeepSeek-V3; the notes also give the other FP8 kind's figure), with an FP8 KV cache where the GPU has
FP8 (not A100); context attention is bf16. Each setup is first checked to fit, with the package's own memory
model (`sdk.memory.estimate_kv_cache`: the whole requests' KV cache must fit in 90% of the memory). Every point's
notes say how much of the time comes from measured tables and how much from the package's empirical elementwise
model, and what the all-reduces cost. `--write` replaces domain/data/calibration_kernels.toml; the date is the
package's upload date in uv.lock. `--allreduce` prints the per-all-reduce latency the engine uses for Llama 3.1 70B
(8192 x batch elements) on every system, engine and TP size.
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

from bench.calibration_toml import allreduce_table, to_toml
from bench.kernel_setups import GPUS, MODELS, SETUPS, Setup, llama_config_dir

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "domain" / "data" / "calibration_kernels.toml"
PACKAGE = "aiconfigurator-core"

# FP8 GEMMs as the published FP8 checkpoints quantize them: NVIDIA's Llama FP8 checkpoints per-tensor
# (hf_quant_config quant_algo FP8), Qwen3-32B-FP8 and DeepSeek-V3 block-scaled (weight_block_size 128 x 128).
# The other FP8 kind is evaluated too and given in the notes; DeepSeek-V3's MoE tables are block-scaled only.
CHECKPOINT_FP8 = {"qwen3-32b": ("fp8_block", "fp8"), "deepseek-v3": ("fp8_block",)}
GEMM_NAMES = {"bfloat16": "bf16", "fp8": "fp8 per-tensor", "fp8_block": "fp8 block-scaled"}
NO_FP8 = {"a100_sxm"}  # Ampere: no FP8 tables, FP8 KV cache not measured either
MEMORY_FRACTION = 0.9
FRACTION_KIND = {"trtllm": "of_free", "vllm": "of_total", "sglang": "of_total"}
ALL_REDUCE = re.compile(r"(_ar(_\d+)?$|allreduce)")


def _catalog_models() -> dict[str, dict[str, Any]]:
    """Our catalog's model records by id (layer counts, and the shape of models the package ships no config for)."""
    with (ROOT / "domain" / "data" / "models.toml").open("rb") as handle:
        return {model["id"]: model for model in tomllib.load(handle)["models"]}


def _release_date() -> str:
    """The package's upload date, as uv.lock records it."""
    with (ROOT / "uv.lock").open("rb") as handle:
        lock = tomllib.load(handle)
    installed = version(PACKAGE)
    for package in lock["package"]:
        if package["name"] == PACKAGE and package["version"] == installed:
            return min(wheel["upload-time"] for wheel in package["wheels"])[:10]
    raise SystemExit(f"{PACKAGE} {installed} is not in uv.lock")


def _model_path(model: str, catalog: dict[str, dict[str, Any]], scratch: Path) -> str:
    """The package's model path, or a config.json directory written from our catalog's shape."""
    shipped = MODELS[model]
    if shipped is not None:
        return shipped
    record = catalog[model]
    return llama_config_dir(model, record, scratch)


def _gemm_modes(setup: Setup) -> list[str]:
    """The GEMM kinds to evaluate, the checkpoint's first: bf16, or both measured FP8 kinds."""
    if setup.precision != "fp8":
        return ["bfloat16"]
    return list(CHECKPOINT_FP8.get(setup.model, ("fp8", "fp8_block")))


def _quant(setup: Setup, gemm: str) -> dict[str, str]:
    """The package's quant modes for a setup: GEMMs, KV cache, context attention (always bf16) and MoE."""
    fp8 = setup.precision == "fp8"
    modes = {
        "gemm_quant_mode": gemm,
        "kvcache_quant_mode": "fp8" if fp8 and setup.system not in NO_FP8 else "bfloat16",
        "fmha_quant_mode": "bfloat16",
    }
    if setup.model == "deepseek-v3":
        modes["moe_quant_mode"] = "fp8_block" if fp8 else "bfloat16"
    return modes


def _layout(setup: Setup) -> dict[str, int]:
    return {"tp_size": setup.tp, "moe_tp_size": 1, "moe_ep_size": setup.ep} if setup.ep > 1 else {"tp_size": setup.tp}


def _check_fit(setup: Setup, model_path: str, backend_version: str) -> None:
    """Refuse a setup whose requests' KV cache does not fit, by the package's own memory model."""
    from aiconfigurator_core.sdk.memory import estimate_kv_cache

    tokens = setup.batch * (setup.isl + setup.osl)
    estimate = estimate_kv_cache(
        model_path,
        setup.system,
        setup.backend,
        backend_version,
        max_num_tokens=max(8192, setup.isl),
        max_batch_size=setup.batch,
        memory_fraction_kind=FRACTION_KIND[setup.backend],
        memory_fraction_value=MEMORY_FRACTION,
        **_layout(setup),
        **_quant(setup, _gemm_modes(setup)[0]),
    )
    if estimate["total_kv_size_tokens"] < tokens:
        raise SystemExit(f"{setup} does not fit: KV room {estimate['total_kv_size_tokens']} < {tokens} tokens")


def _describe(ops: list[tuple[str, float, float, str]], layers: int, value: float) -> str:
    """How much of the time comes from measured tables, and what the all-reduces cost."""
    total = sum(op[1] for op in ops)
    if abs(total - value) > 1e-6 * max(1.0, value):
        raise SystemExit(f"per-op sum {total} differs from the step latency {value}")
    silicon = sum(op[1] for op in ops if op[3] == "silicon")
    mixed = sum(op[1] for op in ops if op[3] == "mixed")
    text = f"{silicon / total:.0%} of the time from measured tables"
    if mixed:
        text += f", {mixed / total:.0%} from ops mixing measured and modelled parts (attention / MoE)"
    text += (
        f", {(total - silicon - mixed) / total:.0%} from the package's empirical elementwise model (norms, activations)"
    )
    reduces = {op[0]: op[1] for op in ops if ALL_REDUCE.search(op[0]) and op[1] > 0}
    if reduces:
        per_layer = [latency for name, latency in reduces.items() if re.search(r"_ar_\d+$", name)]
        text += f"; all-reduces {sum(reduces.values()):.3f} ms of it"
        if per_layer:
            text += f" ({len(per_layer)} per layer, {1000 * per_layer[0] / layers:.1f} us each)"
    return text


@dataclass(frozen=True)
class Evaluation:
    gemm: str
    value: float
    ops: list[tuple[str, float, float, str]]
    call: str


def _evaluate(setup: Setup, model_path: str, shown: str, backend_version: str, gemm: str) -> Evaluation | None:
    """The engine's figure for one GEMM kind; None when its GEMMs are not all in the measured tables."""
    from aiconfigurator_core.sdk.engine import EngineHandle

    kwargs: dict[str, Any] = {"backend_version": backend_version, **_layout(setup), **_quant(setup, gemm)}
    handle = EngineHandle.compile(model_path, setup.system, setup.backend, **kwargs)
    arguments = ", ".join(f"{key}={value!r}" for key, value in kwargs.items())
    call = f"EngineHandle.compile({shown!r}, {setup.system!r}, {setup.backend!r}, {arguments})"
    if setup.phase == "decode":
        value = handle.decode_step_latency(setup.batch, setup.isl, setup.osl)
        ops = handle.decode_step_per_op(setup.batch, setup.isl, setup.osl)
        call += f".decode_step_latency({setup.batch}, {setup.isl}, {setup.osl})"
    else:
        value = handle.predict_prefill_latency(setup.batch, setup.isl)
        ops, _ = handle.run_static_per_op(batch_size=setup.batch, isl=setup.isl, osl=2)
        call += f".predict_prefill_latency({setup.batch}, {setup.isl})"
    if any(op[3] != "silicon" for op in ops if op[0].endswith("_gemm") and op[1] > 0):
        return None
    return Evaluation(gemm, value, list(ops), call)


def compute(setup: Setup, catalog: dict[str, dict[str, Any]], scratch: Path, date: str) -> dict[str, Any]:
    """One calibration point from the package's engine."""
    from aiconfigurator_core.sdk import perf_database

    model_path = _model_path(setup.model, catalog, scratch)
    backend_version = perf_database.resolve_query_version(setup.system, setup.backend, "current")
    _check_fit(setup, model_path, backend_version)
    shown = model_path if MODELS[setup.model] else f"<config.json of {setup.model} from domain/data/models.toml>"
    evaluations = [
        evaluation
        for gemm in _gemm_modes(setup)
        if (evaluation := _evaluate(setup, model_path, shown, backend_version, gemm)) is not None
    ]
    if not evaluations or evaluations[0].gemm != _gemm_modes(setup)[0]:
        raise SystemExit(f"{setup}: the checkpoint's GEMM kind has no measured tables")
    best = evaluations[0]
    modes = _quant(setup, best.gemm)
    digits = 3 if setup.phase == "decode" else 2
    if setup.phase == "decode":
        what = (
            f"One generation-only step (no prefill tokens in it) of {setup.batch} sequences at context "
            f"{setup.isl} + {setup.osl} // 2 + 1 = {setup.isl + setup.osl // 2 + 1} tokens"
        )
    else:
        what = f"One prefill of {setup.batch} x {setup.isl} tokens (no queueing, no framework dispatch overhead)"
    precision = f"GEMMs {GEMM_NAMES[best.gemm]}"
    for other in evaluations[1:]:
        precision += f" as the published FP8 checkpoint ({GEMM_NAMES[other.gemm]} GEMMs: {other.value:.{digits}f} ms)"
    precision += f", KV cache {modes['kvcache_quant_mode']}, context attention bf16"
    gpu = GPUS[setup.system]
    tables = f"{setup.system} {setup.backend} {backend_version}"
    point_id = f"aic-{version(PACKAGE)}-{gpu}-{setup.backend}-{setup.model}-{setup.precision}-tp{setup.tp}"
    point_id += (f"-ep{setup.ep}" if setup.ep > 1 else "") + f"-b{setup.batch}-{setup.phase}-{setup.isl}"
    if setup.phase == "decode":
        point_id += f"-{setup.osl}"
    notes = f"{what}; {precision}; {_describe(best.ops, catalog[setup.model]['layers'], best.value)}."
    if MODELS[setup.model] is None:
        notes += f" The package ships no {setup.model} config: the shape comes from our catalog."
    return {
        "id": point_id,
        "kind": "inference",
        "gpu": gpu,
        "gpu_count": setup.tp,  # experts are spread over the same GPUs as attention
        "model": setup.model,
        "precision": setup.precision,
        "engine": setup.backend,
        "engine_version": backend_version,
        "tensor": setup.tp,
        "pipeline": 1,
        "expert": setup.ep,
        "kv_cache_precision": "fp8" if modes["kvcache_quant_mode"] == "fp8" else "bf16",
        "input_tokens": setup.isl,
        "output_tokens": setup.osl,
        "concurrency": setup.batch,
        "metric": "decode_step_ms" if setup.phase == "decode" else "prefill_ms",
        "value": round(best.value, digits),
        "date": date,
        "source": f"{PACKAGE} {version(PACKAGE)} measured kernel tables ({tables})",
        "quote": f"{best.call} = {best.value:.{digits}f} ms",
        "notes": notes,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write {OUTPUT.relative_to(ROOT)}")
    parser.add_argument("--allreduce", action="store_true", help="print the per-all-reduce latency table instead")
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)  # the package logs its table fallbacks; the notes carry what matters
    catalog = _catalog_models()
    if args.allreduce:
        print(allreduce_table(catalog))
        return 0
    date = _release_date()
    with tempfile.TemporaryDirectory() as scratch:
        points = [compute(setup, catalog, Path(scratch), date) for setup in SETUPS]
    if len({point["id"] for point in points}) != len(points):
        raise SystemExit("duplicate point ids")
    text = to_toml(points)
    if args.write:
        OUTPUT.write_text(text)
        print(f"wrote {len(points)} points to {OUTPUT.relative_to(ROOT)}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
