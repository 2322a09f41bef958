"""GPU comparison ratios and summaries."""

from __future__ import annotations

import pytest

from domain.catalog import Catalog
from domain.narrative.summaries import comparison_summary
from domain.pricing.compare import compare_gpus


def test_ratios_to_the_first_gpu(reference: Catalog) -> None:
    rows = compare_gpus(reference, [reference.gpu("h100-sxm"), reference.gpu("h200"), reference.gpu("mi300x")])
    assert rows[0].memory_gb == rows[0].bf16_tflops == 1.0
    assert rows[1].memory_gb == pytest.approx(141 / 80, abs=1e-3)
    assert rows[1].bf16_tflops == 1.0  # H200 has H100's compute, more and faster memory
    assert rows[2].bf16_tflops == pytest.approx(1307.4 / 989, abs=1e-3)


def test_missing_figures_give_no_ratio(reference: Catalog) -> None:
    rows = compare_gpus(reference, [reference.gpu("a100-sxm-80gb"), reference.gpu("h100-sxm")])
    assert rows[1].fp8_tflops is None  # A100 has no FP8 to divide by


def test_summaries_in_both_languages(reference: Catalog) -> None:
    rows = compare_gpus(reference, [reference.gpu("h100-sxm"), reference.gpu("mi300x")])
    english = comparison_summary(reference, rows, "en")
    chinese = comparison_summary(reference, rows, "zh")
    assert english.startswith("Compared with NVIDIA H100") and "2.40x the memory" in english
    assert "显存" in chinese and "2.40x" in chinese
