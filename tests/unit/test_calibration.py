"""The calibration data, its frozen split, and the ledger's promises kept out of sample.

Accuracy is gated on the frozen test set (sources no factor is fitted to) and on leave-one-source-out
cross-validation over the fit set, never on in-sample figures and never by reading a fitted constant back.
"""

from __future__ import annotations

import random
import statistics
from collections import defaultdict
from datetime import date

import pytest

from api.adapters.storage.reference import calibration_points, cross_validation, shipped_ledger
from domain.calibration.harness import reproduce
from domain.calibration.holdout import TEST_SHARE, majority, source_group
from domain.calibration.ledger import band, score
from domain.calibration.spreads import BAND_COVERAGE
from domain.catalog import Catalog

POINTS = calibration_points()
MAX_TEST_MEDIAN = 0.10
MAX_TEST_POINT = 0.35
MAX_CV_MEDIAN = 0.10
# A kind's band coverage is judged once it has this many test points (fewer say little about 80%).
KIND_COVERAGE_POINTS = 5


def test_points_are_distinct_and_sourced() -> None:
    ids = [point.id for point in POINTS]
    assert len(ids) == len(set(ids))
    assert len(POINTS) >= 40
    for point in POINTS:
        # A page, or the released package whose measured tables produced the figure
        assert point.source.startswith(("http", "aiconfigurator-core ")), point.id
        assert point.value > 0, point.id
        assert point.date <= date(2026, 12, 31), point.id


def test_points_cover_vendors_and_kinds(reference: Catalog) -> None:
    kinds = {point.kind for point in POINTS}
    assert kinds == {"inference", "training", "fine_tuning", "image_generation"}
    vendors = set()
    for point in POINTS:
        gpu = reference.gpu(point.gpu)
        assert gpu is not None, point.id
        vendors.add(gpu.vendor)
    assert {"nvidia", "amd", "intel"} <= vendors


@pytest.mark.parametrize("point", POINTS, ids=lambda p: p.id)
def test_point_reproduces_with_a_finite_band(reference: Catalog, point) -> None:  # type: ignore[no-untyped-def]
    found = reproduce(reference, point)
    assert 0 < found.low <= found.expected <= found.high, point.id


def test_the_split_holds_out_whole_sources_in_every_stratum(reference: Catalog) -> None:
    scored = score(reference, POINTS, {})
    sides: dict[str, set[str]] = defaultdict(set)
    strata: dict[str, list[str]] = defaultdict(list)
    for item in scored:
        sides[item.group].add(item.side)
        strata[item.group].append(f"{item.reproduction.family}/{item.reproduction.point.kind}")
    assert all(len(found) == 1 for found in sides.values())  # a source is never split
    held = {group for group, found in sides.items() if found == {"test"}}
    assert len(held) >= TEST_SHARE * len(sides)
    by_stratum: dict[str, set[str]] = defaultdict(set)
    for group, labels in strata.items():
        by_stratum[majority(labels)].add(group)
    for stratum, groups in by_stratum.items():
        if len(groups) >= 2:
            assert groups & held, stratum


def test_every_workload_kind_has_test_set_points(reference: Catalog) -> None:
    # A kind the test set does not reach has no out-of-sample figure at all: its accuracy would be a fit's claim.
    held = {item.reproduction.point.kind for item in score(reference, POINTS, {}) if item.side == "test"}
    assert held == {point.kind for point in POINTS}


def test_the_split_does_not_depend_on_the_order_of_the_points(reference: Catalog) -> None:
    shuffled = list(POINTS)
    random.Random(7).shuffle(shuffled)
    sides = {item.reproduction.point.id: item.side for item in score(reference, POINTS, {})}
    assert sides == {item.reproduction.point.id: item.side for item in score(reference, shuffled, {})}


def test_the_cross_validation_file_is_current(reference: Catalog) -> None:
    cross = cross_validation()
    fit = [item.reproduction for item in score(reference, POINTS, {}) if item.side == "fit"]
    missing = [item.point.id for item in fit if item.point.id not in cross]
    stale = [
        item.point.id for item in fit if item.point.id in cross and cross[item.point.id].in_sample != item.expected
    ]
    assert not missing and not stale, "run `uv run python bench/cross_validate.py --write`"
    test_ids = {item.reproduction.point.id for item in score(reference, POINTS, {}) if item.side == "test"}
    assert not test_ids & set(cross)  # the test set is never refit without itself: it is never fitted at all


def test_the_test_set_is_within_the_published_accuracy() -> None:
    test = [item for item in shipped_ledger().scored if item.side == "test"]
    errors = [item.error for item in test]
    assert statistics.median(errors) <= MAX_TEST_MEDIAN
    assert max(errors) <= MAX_TEST_POINT, max(test, key=lambda item: item.error).reproduction.point.id


def test_bands_hold_80_percent_of_the_test_set_overall_and_per_kind() -> None:
    ledger = shipped_ledger()
    by_kind: dict[str, list[bool]] = defaultdict(list)
    for item in ledger.scored:
        if item.side != "test":
            continue
        found = item.reproduction
        spread = ledger.spread(found.family, found.point.kind, item.regime)
        low, high = band(found.expected, found.low, found.high, spread)
        by_kind[found.point.kind].append(low <= found.point.value <= high)
    everything = [flag for flags in by_kind.values() for flag in flags]
    assert sum(everything) / len(everything) >= BAND_COVERAGE
    for kind, flags in by_kind.items():
        if len(flags) >= KIND_COVERAGE_POINTS:
            assert sum(flags) / len(flags) >= BAND_COVERAGE, kind


def test_cross_validation_keeps_its_promises() -> None:
    totals = shipped_ledger().totals
    assert totals.cv_median_error_pct is not None and totals.cv_band_coverage_pct is not None
    assert totals.cv_median_error_pct <= 100 * MAX_CV_MEDIAN
    assert totals.cv_band_coverage_pct >= 100 * BAND_COVERAGE


def test_bands_never_reach_zero() -> None:
    ledger = shipped_ledger()
    for scored in ledger.scored:
        item = scored.reproduction
        low, _ = band(item.expected, item.low, item.high, ledger.spread(item.family, item.point.kind, scored.regime))
        assert low > 0, item.point.id


def test_a_source_is_named_the_same_whatever_its_spelling() -> None:
    assert source_group("https://www.example.com/a/b/") == source_group("http://example.com/a/b#x")
    assert source_group("https://example.com/a") != source_group("https://example.com/b")


def test_one_page_read_at_two_commits_or_in_two_languages_is_one_source() -> None:
    page = "github.com/NVIDIA/TensorRT-LLM/docs/source/performance.md"
    for address in (
        "https://github.com/NVIDIA/TensorRT-LLM/blob/v0.8.0/docs/source/performance.md",
        "https://github.com/NVIDIA/TensorRT-LLM/blob/138f96d45f90b9667426f7c47297d8c06bafac73/docs/source/performance.md",
        "https://raw.githubusercontent.com/NVIDIA/TensorRT-LLM/v0.8.0/docs/source/performance.md",
    ):
        assert source_group(address) == page, address
    english = "https://www.amd.com/en/developer/resources/rocm-hub/dev-ai/performance-results.html"
    chinese = "https://www.amd.com/zh-cn/developer/resources/rocm-hub/dev-ai/performance-results.html"
    assert source_group(english) == source_group(chinese)
    # A Markdown page its repository moved to MDX is the same page.
    automodel = "https://github.com/NVIDIA-NeMo/Automodel/blob/{}/docs/performance-summary.{}"
    assert source_group(automodel.format("01926a5", "md")) == source_group(automodel.format("2861c41", "mdx"))
    # Other files of one repository, and a paper's arXiv number (two parts, not a release), stay apart.
    assert source_group("https://github.com/a/b/blob/x/one.md") != source_group("https://github.com/a/b/blob/x/two.md")
    assert source_group("https://arxiv.org/pdf/2407.21783") != source_group("https://arxiv.org/pdf/2407.21784")
