"""Contract: schemathesis drives every operation of the committed OpenAPI document against a live server.

Examples, coverage and fuzzing phases; positive and negative data; every default check (no server error, status
code and content type conformance, response schema, negative data rejected, positive data accepted).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import ClassVar

import schemathesis
from hypothesis import HealthCheck, settings

from tests.conftest import CONTRACT_API_KEY, LiveServer

CONFIG = schemathesis.Config.from_dict(
    {
        "generation": {
            "mode": "all",
            # Fixed and modest in CI so the suite stays fast and repeatable; bench/ holds the long run.
            "max-examples": int(os.environ.get("GPU_ADVISOR_CONTRACT_EXAMPLES", "40")),
            "deterministic": True,
        },
        "operations": [
            {
                # A schema-valid body can still name a model, GPU or provider the catalog does not have, or ask
                # for a model that is not an LLM: those are 400 problems by contract (api.md), with suggestions;
                # deleting an offer that does not exist is a 404.
                "include-path-regex": "^/v1/(recommendations|estimates|tco|admin/offers/.*)$",
                "checks": {"positive_data_acceptance": {"expected-statuses": ["2xx", "400", "404"]}},
            },
            {
                # A config.json is any object by schema: one that lacks a key the architecture needs or has an
                # unsupported model_type is a 400 naming it; a name another model has is a 409 conflict.
                "include-path-regex": "^/v1/admin/models/.*$",
                "checks": {"positive_data_acceptance": {"expected-statuses": ["2xx", "400", "409"]}},
            },
            {
                # A schema-valid import can be larger than the documented body limit (10,000 rows of long notes):
                # the documented 413 is the right answer then.
                "include-path-regex": "^/v1/admin/offers:bulk$",
                "checks": {"positive_data_acceptance": {"expected-statuses": ["2xx", "400", "413"]}},
            },
        ],
    }
)
schema = schemathesis.openapi.from_path(Path(__file__).parents[2] / "openapi" / "openapi.json", config=CONFIG)


@schema.parametrize()
@settings(deadline=None, suppress_health_check=list(HealthCheck), database=None)
def test_operation_conforms(case: schemathesis.Case, live_server: LiveServer) -> None:
    # With the key, administrative operations are exercised for real (on the contract run's own database).
    case.call_and_validate(base_url=live_server.url, headers={"X-API-Key": CONTRACT_API_KEY})


class RecommendationFlow(schema.include(path_regex="^/v1/recommendations").as_state_machine()):  # type: ignore[misc]
    """Follows the declared link: createRecommendation -> getRecommendation with the id it returned."""

    base_url = ""
    created: ClassVar[dict[str, bytes]] = {}
    fetched: ClassVar[list[str]] = []

    def get_call_kwargs(self, case: schemathesis.Case) -> dict[str, object]:
        return {"base_url": self.base_url, "headers": {"X-API-Key": CONTRACT_API_KEY}}

    def after_call(self, response: schemathesis.Response, case: schemathesis.Case) -> None:
        if response.status_code != 200:
            return
        if case.operation.label == "POST /v1/recommendations":
            self.created[response.json()["id"]] = response.content
        elif case.operation.label == "GET /v1/recommendations/{recommendation_id}":
            rec_id = case.path_parameters["recommendation_id"]
            if rec_id in self.created:
                # Beyond the schema: the stored document is the one the POST answered with.
                assert response.content == self.created[rec_id], f"{rec_id} changed between POST and GET"
                self.fetched.append(rec_id)


def test_stored_recommendations_follow_the_link(live_server: LiveServer) -> None:
    RecommendationFlow.base_url = live_server.url
    RecommendationFlow.run(
        settings=settings(
            max_examples=int(os.environ.get("GPU_ADVISOR_STATEFUL_EXAMPLES", "25")),
            stateful_step_count=6,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
            derandomize=True,
        )
    )
    assert RecommendationFlow.fetched, "no stored recommendation was fetched through the link"
