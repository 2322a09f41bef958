"""bench/aiconfigurator_compare.py's mapping of calibration points to aiconfigurator-core calls (no package needed)."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from bench.aiconfigurator_compare import PACKAGE, Unexpressible, _catalog_models, _setup
from domain.calibration.ledger import Scored
from domain.calibration.points import CalibrationPoint, Reproduction
from domain.catalog import Catalog


def scored(**fields: object) -> Scored:
    values: dict[str, object] = {
        "id": "p",
        "kind": "inference",
        "gpu": "h100-sxm",
        "model": "llama-3.1-70b",
        "precision": "fp8",
        "engine": "trtllm",
        "input_tokens": 1024,
        "output_tokens": 1024,
        "metric": "output_tokens_per_s",
        "value": 1000.0,
        "date": datetime.date(2025, 1, 1),
        "source": "https://example.org/benchmarks",
        **fields,
    }
    point = CalibrationPoint(**values)  # type: ignore[arg-type]
    return Scored(Reproduction(point, "hopper", 1.0, 1.0, 1.0), "test", "example.org", "le_64", 1.0)


def test_the_packages_own_output_is_not_compared_with_itself(reference: Catalog, tmp_path: Path) -> None:
    item = scored(source=f"{PACKAGE} 0.12.0 measured kernel tables (h100_sxm trtllm 1.3.0rc20)")
    with pytest.raises(Unexpressible, match="circular"):
        _setup(item, reference, _catalog_models(), tmp_path)


def test_a_gpu_without_measured_tables_is_not_expressible(reference: Catalog, tmp_path: Path) -> None:
    with pytest.raises(Unexpressible, match="no measured tables"):
        _setup(scored(gpu="mi300x"), reference, _catalog_models(), tmp_path)


def test_static_batching_sources_run_the_static_mode_with_their_batch(reference: Catalog, tmp_path: Path) -> None:
    notes = "TensorRT-LLM v0.8.0 table: gptSessionBenchmark static batching."
    item = scored(tensor=2, gpu_count=2, concurrency=1024, notes=notes, model="llama-2-70b")
    setup = _setup(item, reference, _catalog_models(), tmp_path)
    assert setup.static
    assert setup.batch == 1024
    assert setup.layout == {"tp_size": 2, "pp_size": 1, "attention_dp_size": 1}
    # Llama 2 70B ships no config with the package: one is written from the catalog's shape.
    assert (tmp_path / "llama-2-70b" / "config.json").is_file()


def test_expert_parallel_with_tp1_is_attention_data_parallel(reference: Catalog, tmp_path: Path) -> None:
    item = scored(model="deepseek-r1", gpu="h200", gpu_count=8, tensor=1, expert=8, concurrency=3000)
    setup = _setup(item, reference, _catalog_models(), tmp_path)
    assert not setup.static
    assert setup.layout == {"tp_size": 1, "pp_size": 1, "attention_dp_size": 8, "moe_tp_size": 1, "moe_ep_size": 8}
    # The batch asked of the package is per attention rank: the engine's cap of the copy, shared by eight ranks.
    assert setup.batch * 8 <= 3000


def test_tensor_parallel_experts_split_each_expert(reference: Catalog, tmp_path: Path) -> None:
    item = scored(model="deepseek-r1", gpu="h200", gpu_count=8, tensor=8, concurrency=16, engine="sglang")
    setup = _setup(item, reference, _catalog_models(), tmp_path)
    assert setup.layout["moe_tp_size"] == 8
    assert setup.layout["moe_ep_size"] == 1
    assert setup.batch == 16
