"""Band half-widths from cross-validated residuals, per cell (GPU family, kind and regime) with pooled fallbacks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from domain.calibration.holdout import conformal_spread

# The share of new measurements a band promises to hold, and the narrowest band any estimate gets.
BAND_COVERAGE = 0.80
MIN_SPREAD = 0.10
# Where no family of a kind has enough out-of-sample residuals, the band is this wide and the estimate is spec-sheet.
UNCALIBRATED_SPREAD = 0.35


@dataclass(frozen=True)
class Spreads:
    """Band half-widths from cross-validated residuals: a cell's own where it has enough, else its regime's over every
    family, else its kind's; a family and kind with no residual at all get no calibrated band."""

    cells: Mapping[tuple[str, str, str], float]  # (kind, family, regime)
    regimes: Mapping[tuple[str, str], float]  # (kind, regime), pooled over the families
    kinds: Mapping[str, float]
    measured: frozenset[tuple[str, str]]  # (kind, family) with residuals

    def of(self, kind: str, family: str, regime: str) -> float:
        if (kind, family) not in self.measured:
            return UNCALIBRATED_SPREAD
        found = self.cells.get((kind, family, regime)) or self.regimes.get((kind, regime)) or self.kinds.get(kind)
        return found if found is not None else UNCALIBRATED_SPREAD

    def content(self) -> list[Any]:
        """Every spread, sorted: what a ledger version names."""
        return [sorted(self.cells.items()), sorted(self.regimes.items()), sorted(self.kinds.items())]


def spreads_from(residuals: Mapping[tuple[str, str, str], list[float]]) -> Spreads:
    """The conformal spread of each cell, regime and kind with enough residuals, never below MIN_SPREAD."""
    by_regime: dict[tuple[str, str], list[float]] = {}
    by_kind: dict[str, list[float]] = {}
    for (kind, _, cell), values in residuals.items():
        by_regime.setdefault((kind, cell), []).extend(values)
        by_kind.setdefault(kind, []).extend(values)

    def spreads_of(groups: Mapping[Any, list[float]]) -> dict[Any, float]:
        found = {key: conformal_spread(values, BAND_COVERAGE) for key, values in groups.items()}
        return {key: max(MIN_SPREAD, spread) for key, spread in found.items() if spread is not None}

    return Spreads(
        cells=spreads_of(residuals),
        regimes=spreads_of(by_regime),
        kinds=spreads_of(by_kind),
        measured=frozenset((kind, family) for kind, family, _ in residuals),
    )
