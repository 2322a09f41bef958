"""A fresh install's prices are current: its first answers carry no stale-price warning on the day they are asked."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from api.settings import Settings
from domain.catalog import Catalog

# A new user's first questions: a small model served, a large one served on 8-GPU machines, a fine-tuning run.
FIRST_QUESTIONS: list[dict[str, Any]] = [
    {"workload": {"kind": "inference", "model": "llama-3.1-8b", "concurrency": 8}},
    {"workload": {"kind": "inference", "model": "deepseek-r1", "concurrency": 16}, "limit": 50},
    {
        "workload": {"kind": "fine_tuning", "model": "llama-3.1-8b", "method": "lora", "train_tokens": 200_000_000},
        "objective": "cost",
    },
]


def test_no_shipped_offer_is_older_than_the_default_age_limit_today(reference: Catalog) -> None:
    """The clock is today's date on purpose: this fails once a shipped price outlives the limit, so re-read its page."""
    limit = Settings.from_env({}).price_max_age_days
    oldest_allowed = date.today() - timedelta(days=limit)
    stale = sorted(f"{o.id} (as_of {o.as_of})" for o in reference.offers if o.as_of < oldest_allowed)
    assert stale == [], f"{len(stale)} shipped offers are older than {limit} days: re-read their pages"


@pytest.mark.parametrize("body", FIRST_QUESTIONS, ids=["serve-8b", "serve-deepseek-r1", "fine-tune-cost"])
async def test_a_fresh_install_answers_with_no_stale_price(
    client: AsyncTestClient[Litestar], body: dict[str, Any]
) -> None:
    """The seeded default catalog under the default settings, asked today: no option and no usable offer is stale."""
    response = await client.post("/v1/recommendations", json=body)
    assert response.status_code == 200, response.text
    answer = response.json()
    costs = [option["cost"] for option in answer["options"] if option["cost"]]
    assert costs, "the question should be answered with priced options"
    old = [
        (option["gpu"]["id"], option["cost"]["price_age_days"])
        for option in answer["options"]
        if option["cost"] and option["cost"]["stale_price"]
    ]
    assert old == []
    assert answer["requirements"]["stale_offers"] == 0
