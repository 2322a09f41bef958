"""How accurate the estimates are: the calibration ledger."""

from __future__ import annotations

from typing import Annotated

import msgspec
from litestar import get
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Example

from api.schemas import Wire
from api.wiring import Services
from domain.calibration.ledger import Ledger, LedgerRow, LedgerTotals


class AccuracyRead(Wire):
    """The calibration ledger: per GPU family, workload kind and regime, how well estimates reproduce public
    measurements they were never fitted to."""

    items: Annotated[list[LedgerRow], msgspec.Meta(description="One row per GPU family, workload kind and regime.")]
    total: Annotated[int, msgspec.Meta(description="Rows.")]
    points: Annotated[int, msgspec.Meta(description="Calibration points in all rows, test and fit set.")]
    totals: Annotated[LedgerTotals, msgspec.Meta(description="The whole test set, and the fit set cross-validated.")]
    method: Annotated[str, msgspec.Meta(description="How the split, the cross-validation and the bands are made.")]


_ROW = {
    "family": "hopper",
    "family_name": "NVIDIA Hopper",
    "kind": "inference",
    "regime": "le_64",
    "sources": 2,
    "points": 6,
    "median_error_pct": 9.5,
    "worst_error_pct": 21.0,
    "band_coverage_pct": 83.3,
    "cv_median_error_pct": 8.1,
    "cv_worst_error_pct": 30.2,
    "cv_band_coverage_pct": 80.0,
    "fit_points": 40,
    "in_sample_median_error_pct": 5.2,
    "band_pct": 22.0,
}
_EXAMPLE = {
    "items": [_ROW],
    "total": 1,
    "points": 46,
    "totals": {field.name: _ROW[field.name] for field in msgspec.structs.fields(LedgerTotals)},
    "method": "Sources are split by a hash of their address ...",
}


@get(
    "/v1/accuracy",
    operation_id="getAccuracy",
    summary="How accurate the estimates are",
    description=(
        "The calibration ledger behind every estimate's band and confidence, out of sample. Public measurements "
        "(GPU, model, precision, layout, lengths, engine, source URL) are split by source into a frozen test set, "
        "which no factor is fitted to, and a fit set. For each GPU family, workload kind and regime: the test "
        "set's median and worst error and band coverage, the same figures cross-validated (each fit source left "
        "out of the fit in turn), and the in-sample median for comparison. Bands are split-conformal on the "
        "out-of-sample residuals; an option is 'calibrated' when its family and kind have at least 3 out-of-sample "
        "points with a median error of at most 15%. Call this before trusting a figure to the dollar."
    ),
    tags=["catalog"],
    responses={
        200: ResponseSpec(
            data_container=AccuracyRead,
            generate_examples=False,
            description="The ledger rows.",
            examples=[Example(summary="One row of the ledger", value=_EXAMPLE)],
        )
    },
)
async def get_accuracy(services: NamedDependency[Services]) -> AccuracyRead:
    """The ledger of the catalog in service."""
    ledger: Ledger = services.view.catalog.accuracy
    rows = list(ledger.rows)
    points = sum(row.points + row.fit_points for row in rows)
    return AccuracyRead(items=rows, total=len(rows), points=points, totals=ledger.totals, method=ledger.method)


ROUTES = [get_accuracy]
