"""Recommendations still waiting for the database when an instance stops are spooled and stored by the next start."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import msgspec
import pytest
from litestar.testing import AsyncTestClient
from redis.asyncio import Redis
from sqlalchemy import select

from api.adapters.storage.bootstrap import migrate_and_seed
from api.adapters.storage.database import create_engine, create_session_factory
from api.adapters.storage.tables import SavedRecommendationRow
from api.app import create_app
from api.services.cluster_flight import CLAIM_PREFIX
from api.services.recommendation_spool import Spool, Spooled
from api.settings import Settings
from tests.conftest import REDIS_URL, free_port
from tests.integration.conftest import OwnPostgres

pytestmark = pytest.mark.integration

BODY = {"workload": {"kind": "inference", "model": "llama-3.1-8b", "concurrency": 21}}


async def stored_ids(url: str) -> list[str]:
    engine = create_engine(url)
    try:
        async with create_session_factory(engine)() as session:
            return list((await session.scalars(select(SavedRecommendationRow.id))).all())
    finally:
        await engine.dispose()


async def test_pending_recommendations_survive_a_stop(seeded_postgres: str, tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    unreachable = f"postgresql+asyncpg://postgres@127.0.0.1:{free_port()}/postgres"
    down = Settings(
        database_url=unreachable, rate_limit_per_minute=0, pending_retry_s=0.05, pending_spool_dir=str(spool)
    )
    async with AsyncTestClient(app=create_app(down)) as client:
        answer = await client.post("/v1/recommendations", json=BODY)
        assert answer.status_code == 200 and answer.headers["x-recommendation-stored"] == "pending"
        rec_id = answer.json()["id"]
    assert [p.name.startswith("pending-") for p in spool.iterdir()] == [True]

    up = Settings(
        database_url=seeded_postgres, rate_limit_per_minute=0, pending_retry_s=0.05, pending_spool_dir=str(spool)
    )
    async with AsyncTestClient(app=create_app(up)) as client:
        deadline = time.monotonic() + 15
        stored = await stored_ids(seeded_postgres)
        while rec_id not in stored and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
            stored = await stored_ids(seeded_postgres)
        assert rec_id in stored
        fetched = await client.get(f"/v1/recommendations/{rec_id}")
        assert fetched.status_code == 200 and fetched.json()["id"] == rec_id
    assert list(spool.iterdir()) == []


async def test_an_unwritable_spool_is_logged_not_raised(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    unreachable = f"postgresql+asyncpg://postgres@127.0.0.1:{free_port()}/postgres"
    down = Settings(database_url=unreachable, rate_limit_per_minute=0, pending_spool_dir=str(blocker / "spool"))
    async with AsyncTestClient(app=create_app(down)) as client:
        answer = await client.post("/v1/recommendations", json=BODY)
        assert answer.headers["x-recommendation-stored"] == "pending"
        rec_id = answer.json()["id"]
    assert any("could not spool" in r.getMessage() and rec_id in r.getMessage() for r in caplog.records)


def serve(port: int, database_url: str, spool: Path, log: Path) -> subprocess.Popen[bytes]:
    """A real server process in a session of its own (so SIGKILL reaches every process it has)."""
    env = os.environ | {
        "DATABASE_URL": database_url,
        "REDIS_URL": REDIS_URL,
        "GPU_ADVISOR_PENDING_SPOOL_DIR": str(spool),
        "GPU_ADVISOR_PENDING_RETRY_S": "0.2",
        "GPU_ADVISOR_RATE_LIMIT_PER_MINUTE": "0",
        "GPU_ADVISOR_LOG_FORMAT": "text",
    }
    command = [sys.executable, "-m", "api.cli", "serve", "--host", "127.0.0.1", "--port", str(port)]
    with log.open("ab") as output:
        return subprocess.Popen(command, env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)


def wait_live(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 120  # generous: the process imports and builds the app on a busy machine
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the server exited: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{url}/health/live", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    pytest.fail(f"the server did not start: {log.read_text()[-2000:]}")


async def test_acknowledged_pending_recommendations_survive_sigkill(
    own_postgres: OwnPostgres, redis: Redis, tmp_path: Path
) -> None:
    # After an outage and a SIGKILL, 0 of 40 pending recommendations reached the database, and the restarted
    # instance still served them from Redis; now each is journaled (fsync) before it is answered and none is cached.
    await migrate_and_seed(own_postgres.url)
    spool, log, port = tmp_path / "spool", tmp_path / "server.log", free_port()
    url = f"http://127.0.0.1:{port}"
    process = serve(port, own_postgres.url, spool, log)
    pending = []
    try:
        wait_live(url, process, log)
        own_postgres.stop()
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            for concurrency in range(1, 41):
                body = {"workload": {"kind": "inference", "model": "llama-3.1-8b", "concurrency": concurrency}}
                answer = await client.post("/v1/recommendations", json=body)
                assert answer.status_code == 200 and answer.headers["x-recommendation-stored"] == "pending"
                pending.append(answer.json()["id"])
        # A claim (a marker that an answer is being computed, released after the answer goes out) is not an answer.
        answers = [key.decode() for key in await redis.keys("*") if not key.decode().startswith(CLAIM_PREFIX)]
        cached = [key for key in answers if any(rec_id in key for rec_id in pending)]
        assert cached == []
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()

    own_postgres.start()
    process = serve(port, own_postgres.url, spool, log)
    try:
        wait_live(url, process, log)
        deadline = time.monotonic() + 60
        stored = set(await stored_ids(own_postgres.url))
        while not set(pending) <= stored and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
            stored = set(await stored_ids(own_postgres.url))
        assert set(pending) <= stored, f"{len(set(pending) - stored)} of {len(pending)} acknowledged were lost"
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            fetched = await client.get(f"/v1/recommendations/{pending[0]}")
        assert fetched.status_code == 200 and fetched.json()["id"] == pending[0]
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
    assert [path for path in spool.iterdir() if path.name.endswith(".jsonl")] == []


def test_a_live_process_journal_is_not_taken_up_by_another(tmp_path: Path) -> None:
    mine, other = Spool(tmp_path), Spool(tmp_path)
    entry = Spooled(
        id="rec_0", catalog_version="v", request={}, response=msgspec.Raw(b"{}"), created_at=datetime.now(UTC)
    )
    assert mine.append([entry]) == 1
    assert list(other.claim()) == []  # held by a live process: its entries are still its own to store
    mine.discard_journal()
    assert list(tmp_path.iterdir()) == []
