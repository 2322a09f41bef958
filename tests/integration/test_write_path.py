"""The write path on PostgreSQL: concurrent recommendations are group-committed, each acknowledged id is stored,
and an id stored before is answered with what is stored."""

from __future__ import annotations

import asyncio

import pytest
from litestar.testing import AsyncTestClient
from sqlalchemy import select

from api.app import create_app
from api.settings import Settings
from api.storage.database import create_engine, create_session_factory
from api.storage.tables import SavedRecommendationRow

pytestmark = pytest.mark.integration


def body(concurrency: int) -> dict[str, object]:
    return {"workload": {"kind": "inference", "model": "llama-3.1-8b", "concurrency": concurrency}}


async def stored(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        async with create_session_factory(engine)() as session:
            return set((await session.scalars(select(SavedRecommendationRow.id))).all())
    finally:
        await engine.dispose()


async def test_concurrent_recommendations_are_each_stored_before_they_are_acknowledged(seeded_postgres: str) -> None:
    settings = Settings(database_url=seeded_postgres, rate_limit_per_minute=0)
    async with AsyncTestClient(app=create_app(settings)) as client:
        answers = await asyncio.gather(*(client.post("/v1/recommendations", json=body(100 + i)) for i in range(48)))
        assert {a.status_code for a in answers} == {200}
        assert all("x-recommendation-stored" not in a.headers for a in answers)
        ids = {a.json()["id"] for a in answers}
        assert len(ids) == 48
        # Acknowledged means committed: visible to another connection now, not eventually.
        assert ids <= await stored(seeded_postgres)


async def test_an_id_stored_before_is_answered_with_the_stored_document(seeded_postgres: str) -> None:
    settings = Settings(database_url=seeded_postgres, rate_limit_per_minute=0)
    async with AsyncTestClient(app=create_app(settings)) as first:
        original = await first.post("/v1/recommendations", json=body(7))
    # A new instance (empty cache) computes the same id again: the answer must be the stored one (its time too).
    async with AsyncTestClient(app=create_app(settings)) as second:
        again = await second.post("/v1/recommendations", json=body(7))
        fetched = await second.get(f"/v1/recommendations/{original.json()['id']}")
    assert again.status_code == 200 and "x-recommendation-stored" not in again.headers
    assert again.json() == original.json() == fetched.json()
