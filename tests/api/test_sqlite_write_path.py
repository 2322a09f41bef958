"""The write path on SQLite: a batch is committed by the writer's own thread, and an acknowledged id is committed."""

from __future__ import annotations

import asyncio
import sqlite3
import zlib
from pathlib import Path

from litestar.testing import AsyncTestClient

from api.adapters.storage.bootstrap import migrate_and_seed
from api.app import create_app
from api.routes.recommendations import STORED_HEADER
from api.settings import Settings
from tests.conftest import sqlite_url


def body(concurrency: int) -> dict[str, object]:
    return {"workload": {"kind": "inference", "model": "llama-3.1-8b", "concurrency": concurrency}}


def stored_ids(database: Path) -> set[str]:
    # A connection of its own, outside the service: what it sees is committed.
    with sqlite3.connect(database) as connection:
        return {row[0] for row in connection.execute("SELECT id FROM saved_recommendations")}


async def test_concurrent_recommendations_are_committed_before_they_are_acknowledged(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path)
    await migrate_and_seed(url)
    async with AsyncTestClient(app=create_app(Settings(database_url=url, rate_limit_per_minute=0))) as client:
        answers = await asyncio.gather(*(client.post("/v1/recommendations", json=body(100 + i)) for i in range(24)))
        assert {a.status_code for a in answers} == {200}
        assert all(STORED_HEADER.lower() not in a.headers for a in answers)
        ids = {a.json()["id"] for a in answers}
        assert len(ids) == 24
        assert ids <= stored_ids(tmp_path / "gpu-advisor.db")


async def test_a_table_that_cannot_be_written_queues_the_recommendation_until_it_can(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path)
    await migrate_and_seed(url)
    database = tmp_path / "gpu-advisor.db"
    settings = Settings(database_url=url, rate_limit_per_minute=0, pending_retry_s=0.05)
    async with AsyncTestClient(app=create_app(settings)) as client:
        with sqlite3.connect(database) as connection:
            connection.execute("ALTER TABLE saved_recommendations RENAME TO saved_elsewhere")
        answer = await client.post("/v1/recommendations", json=body(5))
        assert answer.headers[STORED_HEADER] == "pending"
        rec_id = answer.json()["id"]
        with sqlite3.connect(database) as connection:
            connection.execute("ALTER TABLE saved_elsewhere RENAME TO saved_recommendations")
        for _ in range(400):  # the retry runs every 0.05 s; bounded so a broken retry fails instead of hanging
            if not (await client.get("/health/ready")).json()["pending_recommendations"]:
                break
            await asyncio.sleep(0.05)
        assert rec_id in stored_ids(database)


async def test_the_stored_answer_is_the_served_body_deflated(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path)
    await migrate_and_seed(url)
    async with AsyncTestClient(app=create_app(Settings(database_url=url, rate_limit_per_minute=0))) as client:
        answer = await client.post("/v1/recommendations", json=body(9))
    with sqlite3.connect(tmp_path / "gpu-advisor.db") as connection:
        (stored,) = connection.execute(
            "SELECT response FROM saved_recommendations WHERE id = ?", (answer.json()["id"],)
        ).fetchone()
    # Byte for byte what was sent, in a fraction of the space the JSON takes.
    assert zlib.decompress(stored) == answer.content
    assert len(stored) < len(answer.content) / 3
