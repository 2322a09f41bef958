"""domain/data/calibration_kernels.toml follows the calibration schema and names catalog GPUs and models."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from domain.catalog import Catalog

FILE = Path(__file__).resolve().parents[2] / "domain" / "data" / "calibration_kernels.toml"
FIELDS = {
    "id": str,
    "kind": str,
    "gpu": str,
    "gpu_count": int,
    "model": str,
    "precision": str,
    "engine": str,
    "engine_version": str,
    "tensor": int,
    "pipeline": int,
    "expert": int,
    "kv_cache_precision": str,
    "input_tokens": int,
    "output_tokens": int,
    "concurrency": int,
    "metric": str,
    "value": float,
    "date": str,
    "source": str,
    "quote": str,
    "notes": str,
}


def _points() -> list[dict[str, Any]]:
    with FILE.open("rb") as handle:
        points: list[dict[str, Any]] = tomllib.load(handle)["points"]
    return points


def test_points_have_unique_ids_and_cover_the_setups() -> None:
    points = _points()
    assert len({point["id"] for point in points}) == len(points)
    assert {point["metric"] for point in points} == {"decode_step_ms", "prefill_ms"}
    assert {point["gpu"] for point in points} == {"h100-sxm", "h200", "b200", "a100-sxm-80gb", "l40s"}
    assert {point["tensor"] for point in points} == {1, 2, 4, 8}


@pytest.mark.parametrize("point", _points(), ids=lambda point: point["id"])
def test_point_follows_the_schema(reference: Catalog, point: dict[str, Any]) -> None:
    assert set(point) == set(FIELDS)
    for field, kind in FIELDS.items():
        assert isinstance(point[field], kind), field
    assert re.fullmatch(r"[a-z0-9.-]+", point["id"])
    assert reference.gpu(point["gpu"]) is not None
    assert reference.model(point["model"]) is not None
    assert point["engine"] in {"trtllm", "vllm", "sglang"}
    assert point["precision"] in {"bf16", "fp8"}
    assert point["kv_cache_precision"] in {"bf16", "fp8"}
    assert point["gpu_count"] == point["tensor"] * point["pipeline"]
    assert point["value"] > 0
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", point["date"])
    assert point["source"].startswith("aiconfigurator-core ")
    # The quote is the call that produced the figure and shows the figure.
    assert point["quote"].endswith(f" = {point['value']:.{3 if point['metric'] == 'decode_step_ms' else 2}f} ms")
    assert (".decode_step_latency(" in point["quote"]) == (point["metric"] == "decode_step_ms")
