"""Contract: schemathesis drives every operation of the committed OpenAPI document against a live server.

Examples, coverage and fuzzing phases; positive and negative data; every default check (no server error, status
code and content type conformance, response schema, negative data rejected, positive data accepted).
"""

from __future__ import annotations

import os
from pathlib import Path

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
                "include-path-regex": "^/v1/(recommendations|estimates|tco|admin/.*)$",
                "checks": {"positive_data_acceptance": {"expected-statuses": ["2xx", "400", "404"]}},
            }
        ],
    }
)
schema = schemathesis.openapi.from_path(Path(__file__).parents[2] / "openapi" / "openapi.json", config=CONFIG)


@schema.parametrize()
@settings(deadline=None, suppress_health_check=list(HealthCheck), database=None)
def test_operation_conforms(case: schemathesis.Case, live_server: LiveServer) -> None:
    # With the key, administrative operations are exercised for real (on the contract run's own database).
    case.call_and_validate(base_url=live_server.url, headers={"X-API-Key": CONTRACT_API_KEY})
