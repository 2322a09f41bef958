"""gpu-advisor and aiconfigurator-core against the measurements of the frozen test set's NVIDIA inference points.

Run from the repository root (aiconfigurator-core is in the optional dependency group `calibration`):

    uv run --group calibration python bench/aiconfigurator_compare.py               # the test set
    uv run --group calibration python bench/aiconfigurator_compare.py --side fit    # fit set (cross-validated ours)

For each inference point on an NVIDIA GPU of the chosen side of the split (domain/calibration/ledger.py `score`), it
maps the point's conditions to one aiconfigurator-core call, runs it, and prints the measured value, ours (the
shipped model on the test set; the leave-one-source-out prediction on the fit set), theirs and both errors; then both
medians and within-15% counts over the same points, and every point that could not be expressed, with why.

How a point is expressed (aiconfigurator-core's own backends, perf database and memory model; nothing fitted here):

- system: the package's system of the catalog GPU (SYSTEMS); tables of the engine's `current` release there (the
  point's own engine release is printed beside it: the package holds no tables for old releases);
- model: the package's shipped config, else a Llama-architecture config.json written from our catalog's shape
  (dense models only); precision: bf16/fp16 GEMMs, FP8 as the published checkpoint quantizes it (per-tensor for
  Llama, block-scaled for Qwen3 and DeepSeek), FP4 as NVFP4 on Blackwell and the checkpoint's own MXFP4 for gpt-oss;
  KV cache as the point states; context attention bf16;
- layout: TP, PP; experts over the same GPUs (TP x EP: MoE TP = TP / EP); TP1 x EPn is attention data parallel n;
- mode: sources that ran static batching (gptSessionBenchmark) use `run_static` (batch = sequences per copy;
  throughput = batch x output / (context + generation time)); every other source ran continuous batching and uses
  `run_agg` (the package's aggregated-serving estimate) with 8192 prefill tokens per forward (TensorRT-LLM's
  default max_num_tokens) and the batch in flight = min(sequences per copy, the source's max_batch or the engine's
  default cap, the largest batch the package's memory model fits);
- metric: TPOT and TTFT as the package states them; output tokens/s = its tokens/s per copy x busy copies.

Points whose value is itself aiconfigurator-core's output (its measured-table releases) are not compared: that would
compare the package with itself. They are counted, with gpu-advisor's median distance from them.
"""

from __future__ import annotations

import argparse
import logging
import math
import statistics
import tempfile
import time
import tomllib
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from api.adapters.storage.reference import calibration_points, cross_validation, read_reference_documents
from bench.kernel_setups import llama_config_dir
from domain.calibration.ledger import Scored, score
from domain.catalog import Catalog
from domain.catalog.reference_files import parse_reference
from domain.performance.engines import ENGINES

ROOT = Path(__file__).resolve().parent.parent

PACKAGE = "aiconfigurator-core"
# Catalog GPU ids -> the package's systems that hold measured tables (a100_sxm is the 80 GiB part).
SYSTEMS = {
    "h100-sxm": "h100_sxm",
    "h200": "h200_sxm",
    "b200": "b200_sxm",
    "b300": "b300_sxm",
    "gb200": "gb200",
    "gb300": "gb300",
    "a100-sxm-80gb": "a100_sxm",
    "l40s": "l40s",
    "rtx-pro-6000-blackwell-server": "rtx_pro_6000_server",
}
BLACKWELL = {"b200_sxm", "b300_sxm", "gb200", "gb300", "rtx_pro_6000_server"}
# Catalog model ids -> the package's shipped configs; other dense models get a config from the catalog.
SHIPPED = {
    "llama-3.1-8b": "meta-llama/Meta-Llama-3.1-8B",
    "llama-3.1-70b": "meta-llama/Meta-Llama-3.1-70B",
    "llama-3.1-405b": "meta-llama/Meta-Llama-3.1-405B",
    "qwen3-8b": "Qwen/Qwen3-8B",
    "qwen3-32b": "Qwen/Qwen3-32B",
    "qwen3-30b-a3b": "Qwen/Qwen3-30B-A3B",
    "qwen3-235b-a22b": "Qwen/Qwen3-235B-A22B",
    "deepseek-v3": "deepseek-ai/DeepSeek-V3",
    "deepseek-r1": "deepseek-ai/DeepSeek-R1",
    "gpt-oss-20b": "openai/gpt-oss-20b",
    "gpt-oss-120b": "openai/gpt-oss-120b",
    "mixtral-8x7b": "mistralai/Mixtral-8x7B-v0.1",
    "mixtral-8x22b": "mistralai/Mixtral-8x22B-v0.1",
}
BLOCK_FP8 = ("qwen3", "deepseek")  # FP8 checkpoints with 128 x 128 block scales; Llama's are per-tensor
BACKENDS = {"trtllm", "vllm", "sglang"}
PREFILL_TOKENS = 8192
STATIC_MARKERS = ("gptSessionBenchmark", "static batching")
SERVING_METRICS = {"tpot_ms", "ttft_ms", "output_tokens_per_s", "output_tokens_per_s_per_gpu", "total_tokens_per_s"}


@dataclass(frozen=True)
class Row:
    item: Scored
    theirs: float
    call: str
    seconds: float

    @property
    def measured(self) -> float:
        return self.item.reproduction.point.value

    @property
    def ours_error(self) -> float:
        return (self.item.predicted - self.measured) / self.measured

    @property
    def their_error(self) -> float:
        return (self.theirs - self.measured) / self.measured


class Unexpressible(Exception):
    """A point the package cannot be asked about, with why."""


def _require_package() -> str:
    try:
        return version(PACKAGE)
    except PackageNotFoundError:
        raise SystemExit(
            f"{PACKAGE} is not installed: it is in the optional dependency group 'calibration'. Run\n"
            "    uv run --group calibration python bench/aiconfigurator_compare.py"
        ) from None


def _catalog_models() -> dict[str, dict[str, Any]]:
    with (ROOT / "domain" / "data" / "models.toml").open("rb") as handle:
        return {model["id"]: model for model in tomllib.load(handle)["models"]}


def _model_path(model: str, records: dict[str, dict[str, Any]], scratch: Path) -> str:
    """The package's shipped config, or a Llama-architecture config.json from our catalog's dense shape."""
    if model in SHIPPED:
        return SHIPPED[model]
    record = records.get(model)
    if record is None or record.get("kind") != "llm" or record.get("moe") or record.get("attention") == "mla":
        raise Unexpressible(f"no shipped config for {model} and it is not a dense Llama-shaped model")
    return llama_config_dir(model, record, scratch)


def _quant(model: str, precision: str, kv: str, system: str) -> dict[str, str]:
    """GEMM, MoE, KV-cache and context-attention modes by the package's enum names (absent: checkpoint default)."""
    modes = {"kvcache_quant_mode": "fp8" if kv == "fp8" else "bfloat16", "fmha_quant_mode": "bfloat16"}
    if precision in ("bf16", "fp16"):
        return {**modes, "gemm_quant_mode": "bfloat16", "moe_quant_mode": "bfloat16"}
    if precision == "fp8":
        kind = "fp8_block" if model.startswith(BLOCK_FP8) else "fp8"
        return {**modes, "gemm_quant_mode": kind, "moe_quant_mode": kind}
    if precision == "fp4" and model.startswith("gpt-oss"):
        return modes  # the checkpoint's MXFP4 experts, bf16 attention: the package's defaults for this config
    if precision == "fp4" and system in BLACKWELL:
        return {**modes, "gemm_quant_mode": "nvfp4", "moe_quant_mode": "nvfp4"}
    raise Unexpressible(f"precision {precision} on {system} has no mode mapped here")


@dataclass(frozen=True)
class Setup:
    system: str
    backend: str
    model_path: str
    layout: dict[str, int]
    quant: dict[str, str]
    copies: int
    busy: int
    batch: int  # sequences per attention rank of one copy
    static: bool


def _setup(item: Scored, catalog: Catalog, records: dict[str, dict[str, Any]], scratch: Path) -> Setup:
    point = item.reproduction.point
    if point.source.startswith(PACKAGE):
        raise Unexpressible("the value is the package's own output (measured-table release): circular")
    system = SYSTEMS.get(point.gpu)
    if system is None:
        raise Unexpressible(f"no measured tables for {point.gpu}")
    if point.engine not in BACKENDS:
        raise Unexpressible(f"engine {point.engine!r} is not one the package models")
    if point.metric not in SERVING_METRICS:
        raise Unexpressible(f"metric {point.metric} is not mapped")
    quant = _quant(point.model, point.precision, point.kv_cache_precision, system)
    model_path = _model_path(point.model, records, scratch)
    dp = point.expert if point.tensor == 1 and point.expert > 1 else 1
    layout = {"tp_size": point.tensor, "pp_size": point.pipeline, "attention_dp_size": dp}
    if (records.get(point.model) or {}).get("moe"):
        # Experts over the same GPUs as attention: EP groups, each expert split over the rest (TP8 x EP1: MoE TP8).
        layout |= {"moe_tp_size": max(1, point.tensor * dp // point.expert), "moe_ep_size": point.expert}
    gpus = point.tensor * point.pipeline * dp
    copies = max(1, point.gpu_count // gpus)
    per_copy = math.ceil(point.concurrency / copies)
    engine = ENGINES[point.engine]  # type: ignore[index]
    gpu = catalog.gpu(point.gpu)
    assert gpu is not None
    cap = point.max_batch or engine.batch_cap(gpu)
    batch = max(1, math.ceil(min(per_copy, cap) / dp))
    static = any(marker in point.notes for marker in STATIC_MARKERS)
    return Setup(system, point.engine, model_path, layout, quant, copies, min(copies, point.concurrency), batch, static)


class Runner:
    """The package's backends, databases and models, built once per condition."""

    def __init__(self) -> None:
        from aiconfigurator_core.sdk import common, perf_database
        from aiconfigurator_core.sdk.backends.factory import get_backend
        from aiconfigurator_core.sdk.config import ModelConfig, RuntimeConfig
        from aiconfigurator_core.sdk.models import get_model

        self._common, self._db, self._backend = common, perf_database, get_backend
        self._config, self._runtime, self._get_model = ModelConfig, RuntimeConfig, get_model

    def _model(self, setup: Setup) -> Any:
        enums = {
            "gemm_quant_mode": self._common.GEMMQuantMode,
            "moe_quant_mode": self._common.MoEQuantMode,
            "kvcache_quant_mode": self._common.KVCacheQuantMode,
            "fmha_quant_mode": self._common.FMHAQuantMode,
        }
        modes = {key: enums[key][name] for key, name in setup.quant.items()}
        config = self._config(**setup.layout, **modes)
        return self._get_model(setup.model_path, config, setup.backend)

    def run(self, item: Scored, setup: Setup) -> tuple[float, str]:
        point = item.reproduction.point
        version_now = self._db.resolve_query_version(setup.system, setup.backend, "current")
        database = self._db.get_database(setup.system, setup.backend, version_now)
        if database is None:
            raise Unexpressible(f"no {setup.backend} tables on {setup.system}")
        model = self._model(setup)
        backend = self._backend(setup.backend)
        isl, osl = point.input_tokens, max(1, point.output_tokens)
        where = f"{setup.system} {setup.backend} {version_now} (point: {point.engine_version or '?'})"
        shown = ", ".join(f"{key}={value}" for key, value in {**setup.layout, **setup.quant}.items())
        if setup.static:
            summary = backend.run_static(
                model, database, self._runtime(batch_size=setup.batch, isl=isl, osl=osl), "static"
            )
            if summary.check_oom():
                raise Unexpressible(f"static batch {setup.batch} does not fit by the package's memory model")
            row = summary.get_summary_df().iloc[0].to_dict()
            call = f"run_static(b={setup.batch}, isl={isl}, osl={osl}) on {where}, {shown}"
        else:
            batch = self._fitting_batch(backend, model, database, setup.batch, isl, osl)
            row = self._agg(backend, model, database, batch, isl, osl).get_result_dict()
            call = f"run_agg(b={batch} of {setup.batch} asked, ctx_tokens={self._ctx(batch, isl)}) on {where}, {shown}"
        return self._metric(point.metric, row, setup, isl, osl, point.gpu_count), call

    @staticmethod
    def _ctx(batch: int, isl: int) -> int:
        # The package's sweep keeps at least one decoding request per mixed step (batch 1: one prefill step).
        return max(1, min(PREFILL_TOKENS, isl * max(1, batch - 1)))

    def _agg(self, backend: Any, model: Any, database: Any, batch: int, isl: int, osl: int) -> Any:
        runtime = self._runtime(batch_size=batch, isl=isl, osl=osl)
        return backend.run_agg(model, database, runtime, ctx_tokens=self._ctx(batch, isl))

    def _fitting_batch(self, backend: Any, model: Any, database: Any, wanted: int, isl: int, osl: int) -> int:
        """The largest batch up to `wanted` that the package's memory model fits (its memory grows with batch)."""

        def fits(batch: int) -> bool:
            summary = self._agg(backend, model, database, batch, isl, osl)
            return not (summary.check_oom() or summary.check_kv_cache_oom())

        if fits(wanted):
            return wanted
        if not fits(1):
            raise Unexpressible("one sequence does not fit by the package's memory model")
        low, high = 1, wanted
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (middle, high) if fits(middle) else (low, middle)
        return low

    @staticmethod
    def _metric(metric: str, row: dict[str, Any], setup: Setup, isl: int, osl: int, gpus: int) -> float:
        if metric == "tpot_ms":
            return float(row["tpot"])
        if metric == "ttft_ms":
            return float(row["ttft"])
        output = float(row["tokens/s"]) * setup.busy
        if metric == "output_tokens_per_s":
            return output
        if metric == "output_tokens_per_s_per_gpu":
            return output / gpus
        return output * (isl + osl) / osl  # total_tokens_per_s


def _is_nvidia(catalog: Catalog, gpu_id: str) -> bool:
    gpu = catalog.gpu(gpu_id)
    return gpu is not None and gpu.vendor.lower() == "nvidia"


def _summary(label: str, errors: list[float]) -> str:
    absolute = [abs(value) for value in errors]
    within = sum(value <= 0.15 for value in absolute)
    return (
        f"{label}: median |error| {100 * statistics.median(absolute):.1f}%, worst {100 * max(absolute):.1f}%, "
        f"within 15%: {within} of {len(absolute)}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", choices=("test", "fit", "all"), default="test", help="side of the frozen split")
    parser.add_argument("--calls", action="store_true", help="print the package call behind each estimate")
    args = parser.parse_args(argv)
    package_version = _require_package()
    logging.disable(logging.WARNING)  # the package logs its table fallbacks per op
    catalog = parse_reference(read_reference_documents())
    scored = [
        item
        for item in score(catalog, calibration_points(), cross_validation())
        if item.reproduction.point.kind == "inference"
        and _is_nvidia(catalog, item.reproduction.point.gpu)
        and args.side in ("all", item.side)
    ]
    records = _catalog_models()
    runner = Runner()
    rows: list[Row] = []
    skipped: list[tuple[Scored, str]] = []
    with tempfile.TemporaryDirectory() as scratch:
        for item in scored:
            try:
                setup = _setup(item, catalog, records, Path(scratch))
                started = time.perf_counter()
                theirs, call = runner.run(item, setup)
                rows.append(Row(item, theirs, call, time.perf_counter() - started))
            except Unexpressible as reason:
                skipped.append((item, str(reason)))
            except Exception as error:  # the package refuses some layouts; say which and go on
                skipped.append((item, f"the package raised {type(error).__name__}: {str(error)[:160]}"))
    print(f"{PACKAGE} {package_version} against gpu-advisor, {args.side} side, NVIDIA inference points")
    print(f"{'point':58} {'metric':28} {'measured':>10} {'ours':>10} {'theirs':>10} {'ours%':>7} {'theirs%':>8}")
    for row in rows:
        point = row.item.reproduction.point
        print(
            f"{point.id[:58]:58} {point.metric[:28]:28} {row.measured:10.4g} {row.item.predicted:10.4g} "
            f"{row.theirs:10.4g} {100 * row.ours_error:+7.1f} {100 * row.their_error:+8.1f}"
        )
        if args.calls:
            print(f"    {row.call} [{row.seconds:.2f} s]")
    if rows:
        print(_summary("gpu-advisor        ", [row.ours_error for row in rows]))
        print(_summary(PACKAGE, [row.their_error for row in rows]))
        closer = sum(abs(row.ours_error) < abs(row.their_error) for row in rows)
        print(f"gpu-advisor is the closer of the two on {closer} of {len(rows)} points")
        print(f"seconds per {PACKAGE} estimate: median {statistics.median(row.seconds for row in rows):.2f}")
    circular = [item for item, reason in skipped if reason.endswith("circular")]
    if circular:
        distance = statistics.median(abs(item.predicted / item.reproduction.point.value - 1) for item in circular)
        print(
            f"\n{len(circular)} points are {PACKAGE}'s own kernel-table output (not compared): gpu-advisor's median "
            f"distance from them {100 * distance:.1f}%"
        )
    others = [(item, reason) for item, reason in skipped if not reason.endswith("circular")]
    if others:
        print(f"\nNot expressible ({len(others)}):")
        for item, reason in others:
            print(f"  {item.reproduction.point.id}: {reason}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
