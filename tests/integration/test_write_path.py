"""The write path on PostgreSQL: concurrent recommendations are group-committed, each acknowledged id is stored,
and an id stored before is answered with what is stored."""

from __future__ import annotations

import asyncio
import zlib

import pytest
from litestar.testing import AsyncTestClient
from sqlalchemy import select, text

from api.adapters.storage.database import create_engine, create_session_factory
from api.adapters.storage.tables import SavedRecommendationRow
from api.app import create_app
from api.settings import Settings

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


async def test_the_stored_answer_is_the_served_body_deflated(seeded_postgres: str) -> None:
    settings = Settings(database_url=seeded_postgres, rate_limit_per_minute=0)
    async with AsyncTestClient(app=create_app(settings)) as client:
        answer = await client.post("/v1/recommendations", json=body(9))
    # Another instance, with nothing cached, reads it from the database.
    async with AsyncTestClient(app=create_app(settings)) as other:
        fetched = await other.get(f"/v1/recommendations/{answer.json()['id']}")
    engine = create_engine(seeded_postgres)
    try:
        async with engine.connect() as connection:
            stored = await connection.scalar(
                text("SELECT response FROM saved_recommendations WHERE id = :id"), {"id": answer.json()["id"]}
            )
    finally:
        await engine.dispose()
    # Byte for byte what was sent (JSONB would have reordered keys and turned large floats into integers), in a
    # fraction of the space.
    assert zlib.decompress(stored) == answer.content
    assert len(stored) < len(answer.content) / 3
    assert fetched.content == answer.content


async def test_a_writer_connection_killed_between_batches_does_not_leave_the_next_answer_pending(
    seeded_postgres: str,
) -> None:
    settings = Settings(database_url=seeded_postgres, rate_limit_per_minute=0)
    async with AsyncTestClient(app=create_app(settings)) as client:
        first = await client.post("/v1/recommendations", json=body(11))
        assert first.status_code == 200 and "x-recommendation-stored" not in first.headers
        # As a PostgreSQL restart or a proxy's idle timeout would: every connection the instance holds goes away.
        engine = create_engine(seeded_postgres)
        try:
            async with engine.connect() as connection:
                await connection.execute(
                    text(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                    )
                )
        finally:
            await engine.dispose()
        second = await client.post("/v1/recommendations", json=body(12))
    assert second.status_code == 200
    assert "x-recommendation-stored" not in second.headers, second.headers
    assert {first.json()["id"], second.json()["id"]} <= await stored(seeded_postgres)
