"""Bands are as wide as the out-of-sample errors of their cell (GPU family, kind and regime): a regime whose
estimates miss more gets a wider band, pooled over the families where one family has too few residuals."""

from __future__ import annotations

import math

from api.adapters.storage.reference import shipped_ledger
from domain.calibration.spreads import MIN_SPREAD, UNCALIBRATED_SPREAD, spreads_from


def residuals(error: float, count: int) -> list[float]:
    return [math.log(1 + error)] * count


def test_a_cell_with_enough_residuals_has_its_own_band_and_others_borrow_their_regimes() -> None:
    spreads = spreads_from(
        {
            ("inference", "hopper", "gt_256"): residuals(0.30, 8),
            ("inference", "hopper", "le_64"): residuals(0.12, 8),
            ("inference", "cdna3", "gt_256"): residuals(0.20, 2),
            ("inference", "cdna3", "le_64"): residuals(0.12, 2),
        }
    )
    assert math.isclose(spreads.of("inference", "hopper", "gt_256"), 0.30)
    assert math.isclose(spreads.of("inference", "hopper", "le_64"), 0.12)
    # Two residuals promise nothing at 80%: the regime's, over both families, stands in.
    assert math.isclose(spreads.of("inference", "cdna3", "gt_256"), 0.30)
    # A regime no family measured falls back to the kind; a family never measured gets no calibrated band.
    assert math.isclose(spreads.of("inference", "hopper", "65_256"), 0.30)
    assert spreads.of("inference", "gaudi", "le_64") == UNCALIBRATED_SPREAD
    assert spreads.of("training", "hopper", "one_node") == UNCALIBRATED_SPREAD
    assert spreads_from({("inference", "hopper", "le_64"): residuals(0.01, 8)}).of("inference", "hopper", "le_64") == (
        MIN_SPREAD
    )


def test_the_shipped_bands_of_large_batches_are_their_regimes() -> None:
    # Serving more than 256 sequences per copy misses more than small batches do (issue 23): its bands say so.
    ledger = shipped_ledger()
    assert ledger.spread("hopper", "inference", "gt_256") > ledger.spread("hopper", "inference", "le_64")
