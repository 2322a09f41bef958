"""Response examples for the OpenAPI document, computed from the shipped catalog so they are always real output."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec

from api.examples import ESTIMATE_REQUESTS, REQUESTS
from api.settings import Settings
from api.storage.reference import load_reference_catalog
from domain.ranking import EstimateRequest, RecommendationRequest, estimate, recommend

# Fixed inputs keep the published document stable between exports.
EXAMPLE_TIME = datetime(2026, 11, 29, tzinfo=UTC)
EXAMPLE_RATE = Settings().exchange_rate()
SHOWN_EXCLUSIONS = 3


def _build() -> tuple[dict[str, Any], dict[str, Any]]:
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
    return recommendations, estimates


RECOMMENDATIONS, ESTIMATES = _build()
FIRST_ID: str = next(iter(RECOMMENDATIONS.values()))["id"]
