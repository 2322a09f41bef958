"""A fresh install's prices are current: on the day the shipped offers were last re-read, none is stale."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import msgspec
import pytest

from domain.catalog import Catalog
from domain.planning import RecommendationRequest, recommend
from domain.pricing.costs import DEFAULT_PRICE_MAX_AGE_DAYS
from tests.conftest import RATE

# The day the shipped offers were last re-read on their providers' pages. A test clock, not the calendar: a build must
# not start failing by the date alone, while the service itself warns on every answer whose price outlived the limit.
# Whoever re-reads the pages moves this date, and the tests below then hold the data to the limit on that day.
REVIEWED_ON = date(2026, 12, 3)

# A new user's first questions: a small model served, a large one served on 8-GPU machines, a fine-tuning run.
FIRST_QUESTIONS: list[dict[str, Any]] = [
    {"workload": {"kind": "inference", "model": "llama-3.1-8b", "concurrency": 8}},
    {"workload": {"kind": "inference", "model": "deepseek-r1", "concurrency": 16}, "limit": 50},
    {
        "workload": {"kind": "fine_tuning", "model": "llama-3.1-8b", "method": "lora", "train_tokens": 200_000_000},
        "objective": "cost",
    },
]


def test_the_review_date_is_not_in_the_future() -> None:
    assert date.today() >= REVIEWED_ON


def test_no_shipped_offer_is_older_than_the_default_age_limit_on_the_review_date(reference: Catalog) -> None:
    oldest_allowed = REVIEWED_ON - timedelta(days=DEFAULT_PRICE_MAX_AGE_DAYS)
    stale = sorted(f"{o.id} (as_of {o.as_of})" for o in reference.offers if o.as_of < oldest_allowed)
    assert stale == [], f"{len(stale)} shipped offers are older than {DEFAULT_PRICE_MAX_AGE_DAYS} days: re-read them"
    assert all(o.as_of <= REVIEWED_ON for o in reference.offers)


@pytest.mark.parametrize("body", FIRST_QUESTIONS, ids=["serve-8b", "serve-deepseek-r1", "fine-tune-cost"])
def test_a_fresh_install_answers_with_no_stale_price(reference: Catalog, body: dict[str, Any]) -> None:
    """The shipped catalog under the default limit, asked on the review date: no option and no usable offer is stale."""
    request = msgspec.convert(body, RecommendationRequest)
    now = datetime.combine(REVIEWED_ON, datetime.min.time(), tzinfo=UTC)
    answer = recommend(reference, request, now=now, lang="en", rate=RATE)
    costs = [option.cost for option in answer.options if option.cost]
    assert costs, "the question should be answered with priced options"
    assert [
        (option.gpu.id, cost.price_age_days) for option in answer.options if (cost := option.cost) and cost.stale_price
    ] == []
    assert answer.requirements.stale_offers == 0
