"""The calibration ledger: errors per GPU family and kind, the bands and confidence they warrant."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property
from typing import Annotated, Literal

import msgspec

from domain.calibration.points import Kind, Reproduction
from domain.catalog import Gpu
from domain.hardware.efficiency import Family, family_of
from domain.workloads.results import PerformanceEstimate, Range, rounded

# Share of the calibration points a band must contain, and the narrowest band any estimate gets.
BAND_COVERAGE = 0.80
MIN_SPREAD = 0.10

# Where a family has no point for a kind, the band is this wide and the estimate says it is spec-sheet.
UNCALIBRATED_SPREAD = 0.35
CALIBRATED_MAX_MEDIAN = 0.15


class LedgerRow(msgspec.Struct, kw_only=True, frozen=True):
    """How well the model reproduces the public measurements of one GPU family and workload kind."""

    family: Annotated[str, msgspec.Meta(description="GPU family id: ampere, hopper, blackwell, ada, cdna3, ...")]
    family_name: Annotated[str, msgspec.Meta(description="The family as people name it.")]
    kind: Annotated[Kind, msgspec.Meta(description="Workload kind.")]
    points: Annotated[int, msgspec.Meta(description="Public measurements of this family and kind.")]
    median_error_pct: Annotated[float, msgspec.Meta(description="Median |expected - measured| / measured, %.")]
    worst_error_pct: Annotated[float, msgspec.Meta(description="Largest |expected - measured| / measured, %.")]
    band_coverage_pct: Annotated[float, msgspec.Meta(description="Share of measurements inside the low-high band, %.")]
    band_pct: Annotated[
        float,
        msgspec.Meta(description="Band of this row's estimates: expected / (1 + band) to expected x (1 + band), in %."),
    ]


@dataclass(frozen=True)
class Ledger:
    """The calibration ledger: rows per family and kind, and the band and confidence each one warrants."""

    rows: tuple[LedgerRow, ...]
    reproductions: tuple[Reproduction, ...]

    def spread(self, family: Family, kind: str) -> float:
        """Relative half-width of the band estimates of this family and kind get."""
        row = self._row(family, kind)
        return row.band_pct / 100 if row is not None else UNCALIBRATED_SPREAD

    def calibrated(self, family: Family, kind: str) -> bool:
        row = self._row(family, kind)
        return row is not None and row.points >= 3 and row.median_error_pct <= CALIBRATED_MAX_MEDIAN * 100

    def _row(self, family: Family, kind: str) -> LedgerRow | None:
        kind = "training" if kind == "fine_tuning" and self._index.get(("fine_tuning", family)) is None else kind
        return self._index.get((kind, family))

    @cached_property
    def version(self) -> str:
        """A content hash of the rows: what facts built with this ledger depend on."""
        return hashlib.sha256(msgspec.json.encode(self.rows)).hexdigest()[:16]

    @cached_property
    def _index(self) -> dict[tuple[str, str], LedgerRow]:
        return {(row.kind, row.family): row for row in self.rows}


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
    """Calibrated where the ledger holds enough points of this family and kind with a small median error."""
    if ledger is not None and ledger.calibrated(family_of(gpu), kind):
        return "calibrated"
    return "spec_sheet"
