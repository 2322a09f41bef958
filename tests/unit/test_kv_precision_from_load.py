"""A serving point's recorded KV-cache precision must hold the sequences its own figures show decoding at once."""

from __future__ import annotations

import re

from api.adapters.storage.reference import calibration_points
from domain.catalog import Catalog
from domain.performance.memory import InstanceShape, usable_memory_bytes
from tests.conftest import llm


def _point(point_id: str):  # type: ignore[no-untyped-def]
    return next(p for p in calibration_points() if p.id == point_id)


def test_nim_llama_70b_fp8_profile_holds_its_measured_load_only_with_an_8_bit_cache(reference: Catalog) -> None:
    point = _point("nim-1.8-llama33-70b-h100-fp8-tp2-5000-500-c100-tput")
    # The quoted row: concurrency | TTFT (ms) | ITL (ms) | Throughput(Tokens/s).
    row = re.search(r"\| 100 \| [\d.]+ \| ([\d.]+) \| ([\d.]+) \|", point.quote)
    assert row is not None
    itl_s, tokens_per_s = float(row.group(1)) / 1e3, float(row.group(2))
    # Each decoding sequence emits one token per ITL: this many decode at once.
    decoding = tokens_per_s * itl_s
    assert 80 < decoding < 90
    gpu, model = reference.gpu(point.gpu), llm(reference, point.model)
    assert gpu is not None

    def held(kv: str) -> int:
        shape = InstanceShape.of(model, point.precision, kv, point.input_tokens, point.tensor, 1)
        return shape.max_concurrency(usable_memory_bytes(gpu))

    # Even at the prompt's length alone a 16-bit cache holds about half of them; the recorded 8-bit one holds them.
    assert held("bf16") < 0.6 * decoding
    assert point.kv_cache_precision == "fp8" and held(point.kv_cache_precision) >= decoding
