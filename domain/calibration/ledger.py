"""The calibration ledger: test-set, cross-validated and in-sample errors per cell, and the bands they warrant."""

from __future__ import annotations

import dataclasses
import hashlib
import math
import statistics
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Annotated, Literal

import msgspec

from domain.calibration.harness import reproduce
from domain.calibration.holdout import (
    SPLIT_RULE,
    Regime,
    address,
    held_out_sources,
    majority,
    regime,
    source_group,
    source_hash,
)
from domain.calibration.points import CalibrationPoint, Kind, Reproduction
from domain.calibration.spreads import Spreads, spreads_from
from domain.catalog import Catalog, Gpu
from domain.hardware.efficiency import FAMILY_NAMES, Family, family_of
from domain.workloads.results import PerformanceEstimate, Range, rounded

CALIBRATED_MAX_MEDIAN = 0.15
METHOD = (
    SPLIT_RULE + " Cross-validation leaves one fit source out at a time, refits the efficiency table's factors of the "
    "GPU families it measures on the remaining fit points (bench/cross_validate.py) and predicts the left-out points. "
    "Bands are split-conformal on those cross-validated residuals (|log(measured / predicted)|, the "
    "ceil((n + 1) x 0.8)-th smallest) of the GPU family, kind and regime, pooled over the regime's families where a "
    "cell has too few and over the kind where the regime has too few; figures per cell: test set first, "
    "cross-validated second, in-sample last. The efficiency table is refit on the fit set alone "
    "(bench/fit_factors.py reads nothing else); a factor no fit point moves, or whose refit lands on a bound of "
    "the fitter (a missing mechanism), keeps the value it had before the split, which saw the test set."
)


class CrossValidated(msgspec.Struct, kw_only=True, frozen=True):
    """A fit point's prediction with the shipped factors and with its source left out of the fit."""

    id: str
    in_sample: float
    out_of_fold: float


def parse_cross_validation(text: str) -> dict[str, CrossValidated]:
    """The cross-validated predictions of a calibration_cv.toml document, by point id."""
    raw = tomllib.loads(text).get("points", [])
    return {item.id: item for item in (msgspec.convert(entry, CrossValidated) for entry in raw)}


class LedgerRow(msgspec.Struct, kw_only=True, frozen=True):
    """How well the model reproduces public measurements of one GPU family, workload kind and regime."""

    family: Annotated[str, msgspec.Meta(description="GPU family id: ampere, hopper, blackwell, ada, cdna3, ...")]
    family_name: Annotated[str, msgspec.Meta(description="The family as people name it.")]
    kind: Annotated[Kind, msgspec.Meta(description="Workload kind.")]
    regime: Annotated[
        Regime,
        msgspec.Meta(
            description="Sequences per model copy for inference (le_64, 65_256, gt_256); one_node or multi_node for "
            "training and fine-tuning; all for images."
        ),
    ]
    sources: Annotated[int, msgspec.Meta(description="Test-set sources (pages, files, papers) of this cell.")]
    points: Annotated[int, msgspec.Meta(description="Test-set measurements of this cell (never fitted to).")]
    median_error_pct: Annotated[
        float | None, msgspec.Meta(description="Test set: median |expected - measured| / measured, %; null: none.")
    ]
    worst_error_pct: Annotated[float | None, msgspec.Meta(description="Test set: largest error, %; null: none.")]
    band_coverage_pct: Annotated[
        float | None, msgspec.Meta(description="Test set: share of measurements inside the low-high band, %.")
    ]
    cv_median_error_pct: Annotated[
        float | None,
        msgspec.Meta(description="Leave-one-source-out over the fit set: median error, %; null: no fit points."),
    ]
    cv_worst_error_pct: Annotated[float | None, msgspec.Meta(description="Leave-one-source-out: largest error, %.")]
    cv_band_coverage_pct: Annotated[
        float | None,
        msgspec.Meta(description="Leave-one-source-out: share inside a band built without the point's source, %."),
    ]
    fit_points: Annotated[int, msgspec.Meta(description="Fit-set measurements of this cell.")]
    in_sample_median_error_pct: Annotated[
        float | None, msgspec.Meta(description="Fit set with the shipped factors (in sample, for comparison), %.")
    ]
    band_pct: Annotated[
        float,
        msgspec.Meta(description="Band of this family and kind: expected / (1 + band) to expected x (1 + band), in %."),
    ]


class LedgerTotals(msgspec.Struct, kw_only=True, frozen=True):
    """The whole test set, and the whole fit set cross-validated."""

    sources: Annotated[int, msgspec.Meta(description="Test-set sources.")]
    points: Annotated[int, msgspec.Meta(description="Test-set measurements.")]
    median_error_pct: Annotated[float | None, msgspec.Meta(description="Test set: median error, %.")]
    worst_error_pct: Annotated[float | None, msgspec.Meta(description="Test set: largest error, %.")]
    band_coverage_pct: Annotated[float | None, msgspec.Meta(description="Test set: share inside the band, %.")]
    cv_median_error_pct: Annotated[float | None, msgspec.Meta(description="Cross-validated median error, %.")]
    cv_worst_error_pct: Annotated[float | None, msgspec.Meta(description="Cross-validated largest error, %.")]
    cv_band_coverage_pct: Annotated[float | None, msgspec.Meta(description="Cross-validated band coverage, %.")]
    fit_points: Annotated[int, msgspec.Meta(description="Fit-set measurements.")]
    in_sample_median_error_pct: Annotated[float | None, msgspec.Meta(description="In-sample median error, %.")]


@dataclass(frozen=True)
class Scored:
    """A point reproduced, with its side of the split and the prediction its error is read from."""

    reproduction: Reproduction
    side: Literal["fit", "test"]
    group: str
    regime: Regime
    predicted: float  # test: the shipped model; fit: the model refit without the point's source

    @property
    def log_residual(self) -> float:
        return math.log(self.reproduction.point.value / self.predicted)

    @property
    def error(self) -> float:
        return abs(self.predicted - self.reproduction.point.value) / self.reproduction.point.value


@dataclass(frozen=True)
class Ledger:
    """Rows per family, kind and regime; the band and confidence each family and kind warrant."""

    rows: tuple[LedgerRow, ...]
    totals: LedgerTotals
    scored: tuple[Scored, ...]
    spreads: Spreads
    calibrated_cells: frozenset[tuple[str, str]]
    method: str = METHOD

    @property
    def reproductions(self) -> tuple[Reproduction, ...]:
        return tuple(item.reproduction for item in self.scored)

    def spread(self, family: Family, kind: str, regime: str) -> float:
        """Relative half-width of the band estimates of this family, kind and regime get."""
        return self.spreads.of(self._kind(family, kind), family, regime)

    def calibrated(self, family: Family, kind: str) -> bool:
        return (self._kind(family, kind), family) in self.calibrated_cells

    def _kind(self, family: Family, kind: str) -> str:
        # Fine-tuning borrows training's figures where a family has no fine-tuning measurement.
        return "training" if kind == "fine_tuning" and ("fine_tuning", family) not in self._measured else kind

    @cached_property
    def version(self) -> str:
        """A content hash of what estimates read from the ledger: facts built with it depend on it."""
        content = [self.rows, self.spreads.content(), sorted(self.calibrated_cells)]
        return hashlib.sha256(msgspec.json.encode(content)).hexdigest()[:16]

    @cached_property
    def _measured(self) -> frozenset[tuple[str, str]]:
        return frozenset((item.reproduction.point.kind, item.reproduction.family) for item in self.scored)


def _sequences_per_copy(point: CalibrationPoint) -> float:
    copy = point.pipeline * (point.expert if point.tensor == 1 and point.expert > 1 else point.tensor)
    copies = max(1, point.gpu_count // max(1, copy))
    return math.ceil(point.concurrency / copies)


def _pct(value: float | None) -> float | None:
    return None if value is None else round(100 * value, 1)


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _worst(values: list[float]) -> float | None:
    return max(values) if values else None


def _share(flags: list[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def _cell(item: Scored) -> tuple[str, str, str]:
    return (item.reproduction.point.kind, item.reproduction.family, item.regime)


def _covered(item: Scored, spread: float) -> bool:
    reproduction = item.reproduction
    scale = item.predicted / reproduction.expected
    low, high = band(item.predicted, reproduction.low * scale, reproduction.high * scale, spread)
    return low <= reproduction.point.value <= high


def score(catalog: Catalog, points: Iterable[CalibrationPoint], cross: Mapping[str, CrossValidated]) -> list[Scored]:
    """Every point reproduced, on its side of the frozen split."""
    reproductions = [reproduce(catalog, point) for point in points]
    groups = [source_group(item.point.source) for item in reproductions]
    strata: dict[str, list[str]] = {}
    for item, group in zip(reproductions, groups, strict=True):
        strata.setdefault(group, []).append(f"{item.family}/{item.point.kind}")
    hashes: dict[str, float] = {}
    for item, group in zip(reproductions, groups, strict=True):
        hashes[group] = min(hashes.get(group, 1.0), source_hash(address(item.point.source)))
    held = held_out_sources({group: majority(labels) for group, labels in strata.items()}, hashes)
    scored = []
    for item, group in zip(reproductions, groups, strict=True):
        point = item.point
        found = cross.get(point.id)
        side: Literal["fit", "test"] = "test" if group in held else "fit"
        # A fit point without a cross-validated prediction counts in sample only (bench/cross_validate.py adds it).
        predicted = item.expected if side == "test" or found is None else found.out_of_fold
        cell = regime(point.kind, _sequences_per_copy(point), point.gpu_count)
        scored.append(Scored(item, side, group, cell, predicted))
    return scored


def build_ledger(
    catalog: Catalog, points: Iterable[CalibrationPoint], cross: Mapping[str, CrossValidated] | None = None
) -> Ledger:
    """Test-set, cross-validated and in-sample figures per family, kind and regime, and bands from out-of-sample."""
    cross = cross or {}
    scored = score(catalog, points, cross)
    validated = [item for item in scored if item.side == "fit" and item.reproduction.point.id in cross]
    residuals: dict[tuple[str, str, str], list[float]] = {}
    for item in validated:
        residuals.setdefault(_cell(item), []).append(item.log_residual)
    spreads = spreads_from(residuals)
    # Cross-validated coverage: each fit source's points against a band built without that source's residuals.
    cv_covered: dict[str, bool] = {}
    for group in {item.group for item in validated}:
        others: dict[tuple[str, str, str], list[float]] = {}
        for item in validated:
            if item.group != group:
                others.setdefault(_cell(item), []).append(item.log_residual)
        without = spreads_from(others)
        for item in validated:
            if item.group == group:
                cv_covered[item.reproduction.point.id] = _covered(item, without.of(*_cell(item)))
    # The rows' figures read the spreads, so the ledger exists before its rows.
    ledger = Ledger(
        rows=(),
        totals=_totals(scored, cv_covered, {}),
        scored=tuple(scored),
        spreads=spreads,
        calibrated_cells=_calibrated(scored, cross),
    )
    test_covered = {
        item.reproduction.point.id: _covered(
            item, ledger.spread(item.reproduction.family, item.reproduction.point.kind, item.regime)
        )
        for item in scored
        if item.side == "test"
    }
    cells: dict[tuple[str, str, str], list[Scored]] = {}
    for item in scored:
        cells.setdefault((item.reproduction.point.kind, item.reproduction.family, item.regime), []).append(item)
    rows = []
    for (kind, family, cell), items in sorted(cells.items()):
        test = [item for item in items if item.side == "test"]
        fit = [item for item in items if item.side == "fit"]
        cv = [item for item in fit if item.reproduction.point.id in cv_covered]
        rows.append(
            LedgerRow(
                family=family,
                family_name=FAMILY_NAMES[family],  # type: ignore[index]
                kind=kind,  # type: ignore[arg-type]
                regime=cell,  # type: ignore[arg-type]
                sources=len({item.group for item in test}),
                points=len(test),
                median_error_pct=_pct(_median([item.error for item in test])),
                worst_error_pct=_pct(_worst([item.error for item in test])),
                band_coverage_pct=_pct(_share([test_covered[item.reproduction.point.id] for item in test])),
                cv_median_error_pct=_pct(_median([item.error for item in cv])),
                cv_worst_error_pct=_pct(_worst([item.error for item in cv])),
                cv_band_coverage_pct=_pct(_share([cv_covered[item.reproduction.point.id] for item in cv])),
                fit_points=len(fit),
                in_sample_median_error_pct=_pct(_median([abs(item.reproduction.error) for item in fit])),
                band_pct=round(100 * ledger.spread(family, kind, cell), 1),  # type: ignore[arg-type]
            )
        )
    return dataclasses.replace(ledger, rows=tuple(rows), totals=_totals(scored, cv_covered, test_covered))


def _totals(scored: list[Scored], cv_covered: Mapping[str, bool], test_covered: Mapping[str, bool]) -> LedgerTotals:
    test = [item for item in scored if item.side == "test"]
    fit = [item for item in scored if item.side == "fit"]
    cv = [item for item in fit if item.reproduction.point.id in cv_covered]
    return LedgerTotals(
        sources=len({item.group for item in test}),
        points=len(test),
        median_error_pct=_pct(_median([item.error for item in test])),
        worst_error_pct=_pct(_worst([item.error for item in test])),
        band_coverage_pct=_pct(_share([test_covered[item.reproduction.point.id] for item in test if test_covered])),
        cv_median_error_pct=_pct(_median([item.error for item in cv])),
        cv_worst_error_pct=_pct(_worst([item.error for item in cv])),
        cv_band_coverage_pct=_pct(_share([cv_covered[item.reproduction.point.id] for item in cv])),
        fit_points=len(fit),
        in_sample_median_error_pct=_pct(_median([abs(item.reproduction.error) for item in fit])),
    )


def _calibrated(scored: list[Scored], cross: Mapping[str, CrossValidated]) -> frozenset[tuple[str, str]]:
    """Family and kind cells with at least 3 out-of-sample points (test or cross-validated), median error <= 15%."""
    errors: dict[tuple[str, str], list[float]] = {}
    for item in scored:
        if item.side == "test" or item.reproduction.point.id in cross:
            errors.setdefault((item.reproduction.point.kind, item.reproduction.family), []).append(item.error)
    return frozenset(
        key for key, values in errors.items() if len(values) >= 3 and statistics.median(values) <= CALIBRATED_MAX_MEDIAN
    )


def band(expected: float, low: float, high: float, spread: float) -> tuple[float, float]:
    """The band of an estimate: the scenarios' ends, widened to expected / (1 + spread) .. expected x (1 + spread)."""
    # A factor either way, so a wide band never reaches zero.
    return min(low, expected / (1 + spread)), max(high, expected * (1 + spread))


def widen(performance: PerformanceEstimate, spread: float) -> PerformanceEstimate:
    """Every range of an estimate widened to the ledger's band (concurrency is a count, not an estimate)."""
    changes = {}
    for name in (
        "tokens_per_second",
        "tokens_per_second_per_gpu",
        "ttft_ms",
        "tpot_ms",
        "run_hours",
        "images_per_hour",
    ):
        value: Range | None = getattr(performance, name)
        if value is None:
            continue
        low, high = band(value.expected, value.low, value.high, spread)
        # An end the band leaves as it was is already rounded.
        changes[name] = Range(
            expected=value.expected,
            low=value.low if low == value.low else rounded(low),
            high=value.high if high == value.high else rounded(high),
        )
    return msgspec.structs.replace(performance, **changes)


def confidence(ledger: Ledger | None, gpu: Gpu, kind: str) -> Literal["calibrated", "spec_sheet"]:
    """Calibrated where out-of-sample points of this family and kind are enough and their median error is small."""
    if ledger is not None and ledger.calibrated(family_of(gpu), kind):
        return "calibrated"
    return "spec_sheet"
