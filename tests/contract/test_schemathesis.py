"""Contract: schemathesis drives every operation of the committed OpenAPI document against a live server.

Examples, coverage and fuzzing phases; positive and negative data; every check (no server error, status code and
content type conformance, response schema, negative data rejected, schema-valid data accepted unless it names
something the catalog does not hold or the schema cannot state: ALLOWED_REJECTIONS).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, ClassVar

import schemathesis
from hypothesis import HealthCheck, settings

from tests.conftest import CONTRACT_API_KEY, LiveServer

# The only schema-valid requests the server may refuse, each with the reason the schema cannot say so. Every other
# refusal of positive data fails the run ("schema-valid request rejected").
ALLOWED_REJECTIONS: tuple[tuple[int, str, str], ...] = (
    # (status, pattern the problem's detail or one of its errors must match, reason)
    # Catalog look-ups: the schema lists no catalog ids, so it cannot know these.
    (400, r"no (GPU|model|system) .+ in the catalog", "a name the catalog does not hold"),
    (400, r"no provider .+", "a provider id the catalog does not hold"),
    (400, r"is an? (language|image) model: ", "a catalog model of another kind than the workload names"),
    (400, r"exceeds .+'s context of \d+ tokens", "longer than the context of the catalog model named"),
    (404, r"No \w+ .+ in the catalog", "an id in the path the catalog does not hold"),
    (404, r"No recorded changes of \w+", "an id in the path with no history"),
    # Not look-ups, and not expressible in JSON Schema either: relations between two numbers of one object.
    (400, r"kv_heads exceeds attention_heads", "a relation between two fields (JSON Schema compares no fields)"),
    (400, r"experts_per_token must be fewer than", "a relation between two fields"),
    (400, r"active_params_b exceeds params_b", "a relation between two fields"),
    (400, r"a mixture-of-experts model needs", "either all or none of three fields, with non-zero values"),
    # The CSV import is a string to the schema: its rows are checked by the importer, line by line.
    (400, r"^Nothing was changed\. line \d+ .*(column|not CSV|more values)", "CSV structure beyond a string"),
    (413, r"", "an import over GPU_ADVISOR_MAX_IMPORT_BYTES (the documented 413): JSON Schema cannot bound bytes"),
    # A config.json is any object to the schema: the architecture it must describe is checked by its reader.
    (400, r"hf_config|model_type|config\.json", "a config.json without a key its architecture needs"),
    (400, r"give either hf_config or the figures|is required \(or give hf_config\)", "one of two ways, not both"),
    (409, r"already names", "a name or alias another stored model has: the schema cannot know what is stored"),
    # Which characters are letters or digits is Unicode's say: ECMA patterns without the u flag have no \p{L}.
    (400, r"has no letters or digits", "a model name or alias nothing could look up (only punctuation or marks)"),
)


def _rejection_is_allowed(status: int, problem: dict[str, Any]) -> bool:
    texts = [str(problem.get("detail", ""))] + [str(e.get("message", "")) for e in problem.get("errors") or []]
    return any(
        status == allowed and any(re.search(pattern, text) for text in texts)
        for allowed, pattern, _ in ALLOWED_REJECTIONS
    )


@schemathesis.check
def positive_data_accepted(
    ctx: schemathesis.CheckContext, response: schemathesis.Response, case: schemathesis.Case
) -> bool | None:
    """Schema-valid data is answered 2xx, or refused for one of ALLOWED_REJECTIONS."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code < 400:
        return None
    if response.status_code == 401 and case.operation.label.split(" ")[1].startswith("/v1/admin"):
        return None
    try:
        problem = response.json()
    except ValueError:
        problem = None
    problem = problem if isinstance(problem, dict) else {}
    if not _rejection_is_allowed(response.status_code, problem):
        raise AssertionError(f"schema-valid request rejected: {response.status_code} {problem.get('detail', '')}")
    return None


CONFIG = schemathesis.Config.from_dict(
    {
        "generation": {
            "mode": "all",
            # Fixed and modest in CI so the suite stays fast and repeatable; bench/ holds the long run.
            "max-examples": int(os.environ.get("GPU_ADVISOR_CONTRACT_EXAMPLES", "40")),
            "deterministic": True,
        },
        # Every check runs; the built-in acceptance check is replaced by positive_data_accepted above, which
        # knows the listed reasons.
        "checks": {"positive_data_acceptance": {"enabled": False}},
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
