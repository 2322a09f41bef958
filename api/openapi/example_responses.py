"""Response examples for the OpenAPI document, computed from the shipped catalog so they are always real output."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec

from api.adapters.storage.reference import load_reference_catalog
from api.openapi.examples import ESTIMATE_REQUESTS, REQUESTS, TCO_REQUESTS
from api.settings import Settings
from domain.planning import EstimateRequest, RecommendationRequest, estimate, recommend
from domain.pricing.tco import tco
from domain.pricing.tco_schema import TcoRequest

# Fixed inputs keep the published document stable between exports.
EXAMPLE_TIME = datetime(2026, 11, 29, tzinfo=UTC)
EXAMPLE_RATE = Settings().exchange_rate()
SHOWN_EXCLUSIONS = 3


def _build() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    # One parse of the shipped catalog serves every example of the document.
    catalog = load_reference_catalog()
    recommendations = {}
    for summary, body in REQUESTS.items():
        request = msgspec.convert(body, RecommendationRequest)
        result = msgspec.to_builtins(
            recommend(
                catalog,
                msgspec.structs.replace(request, limit=2),
                now=EXAMPLE_TIME,
                lang=request.lang or "en",
                rate=EXAMPLE_RATE,
            )
        )
        result["excluded"] = result["excluded"][:SHOWN_EXCLUSIONS]
        recommendations[summary] = result
    estimates = {
        summary: msgspec.to_builtins(
            estimate(catalog, msgspec.convert(body, EstimateRequest), now=EXAMPLE_TIME, lang="en", rate=EXAMPLE_RATE)
        )
        for summary, body in ESTIMATE_REQUESTS.items()
    }
    tcos = {
        summary: msgspec.to_builtins(
            tco(
                catalog,
                msgspec.convert(body, TcoRequest),
                today=EXAMPLE_TIME.date(),
                lang=body.get("lang", "en"),
                rate=EXAMPLE_RATE,
            )
        )
        for summary, body in TCO_REQUESTS.items()
    }
    return recommendations, estimates, tcos


RECOMMENDATIONS, ESTIMATES, TCOS = _build()
FIRST_ID: str = next(iter(RECOMMENDATIONS.values()))["id"]
