"""How accurate the estimates are: the calibration ledger."""

from __future__ import annotations

from typing import Annotated

import msgspec
from litestar import get
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Example

from api.schemas import Wire
from api.services import Services
from domain.calibration.ledger import LedgerRow


class AccuracyRead(Wire):
    """The calibration ledger: per GPU family and workload kind, how well estimates reproduce public measurements."""

    items: Annotated[list[LedgerRow], msgspec.Meta(description="One row per GPU family and workload kind.")]
    total: Annotated[int, msgspec.Meta(description="Rows.")]
    points: Annotated[int, msgspec.Meta(description="Calibration points in all rows.")]


_EXAMPLE = {
    "items": [
        {
            "family": "hopper",
            "family_name": "NVIDIA Hopper",
            "kind": "inference",
            "points": 22,
            "median_error_pct": 30.0,
            "worst_error_pct": 80.0,
            "band_coverage_pct": 81.8,
            "band_pct": 60.0,
        }
    ],
    "total": 1,
    "points": 22,
}


@get(
    "/v1/accuracy",
    operation_id="getAccuracy",
    summary="How accurate the estimates are",
    description=(
        "The calibration ledger behind every estimate's band and confidence: for each GPU family and workload kind, "
        "how many public measurements (GPU, model, precision, layout, lengths, engine, source URL) the model "
        "reproduces, the median and worst error of the expected value, the share of measurements inside the "
        "low-high band, and the band's half-width. An option is 'calibrated' when its family and kind have at "
        "least 3 points with a median error of at most 15%. Call this before trusting a figure to the dollar."
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
    ledger = services.view.catalog.accuracy
    rows = list(ledger.rows) if ledger is not None else []
    return AccuracyRead(items=rows, total=len(rows), points=sum(row.points for row in rows))


ROUTES = [get_accuracy]
