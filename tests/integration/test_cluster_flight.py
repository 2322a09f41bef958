"""A recommendation missed by several instances at once (every repeated request after a new snapshot) is computed and
stored by the first of them to claim it; the others answer with what it cached."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest
from redis.asyncio import Redis

from api.services import recommendations as recommendations_service
from api.settings import Settings
from api.wiring import Services
from domain.planning import RecommendationRequest
from tests.conftest import REDIS_URL

pytestmark = pytest.mark.integration

REQUEST = msgspec.convert(
    {"workload": {"kind": "inference", "model": "llama-3.1-8b", "concurrency": 61}}, RecommendationRequest
)


class Ranks:
    """Counts the rankings of every instance in this process."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        real = recommendations_service.rank

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(recommendations_service, "rank", counted)


def hold_store(services: Services, *, fail: bool = False) -> tuple[asyncio.Event, asyncio.Event]:
    """Make `services` stop before storing a computed answer until released, then store it (or fail): (reached,
    release)."""
    reached, release = asyncio.Event(), asyncio.Event()
    save = services.recommendations.save

    async def held(*args: Any, **kwargs: Any) -> Any:
        reached.set()
        await release.wait()
        if fail:
            raise RuntimeError("the claiming instance fails to store its answer")
        return await save(*args, **kwargs)

    services.recommendations.save = held  # type: ignore[method-assign]
    return reached, release


def second_lookup(services: Services) -> asyncio.Event:
    """Set when `services` looks a recommendation up in its cache a second time (after its claim failed)."""
    looked_up = asyncio.Event()
    lookups: list[str] = []
    get = services.cache.get

    async def counted(key: str) -> bytes | None:
        if key.startswith("rec:"):
            lookups.append(key)
            if len(lookups) == 2:
                looked_up.set()
        return await get(key)

    services.cache.get = counted  # type: ignore[method-assign]
    return looked_up


async def asked_while_the_first_stores(database_url: str, *, fail: bool) -> list[Any]:
    """Two instances: the first computes the request and stops before storing it; the second is asked meanwhile and
    looks the answer up once more (its claim failed); then the first stores it (or fails). Both outcomes."""
    settings = Settings(database_url=database_url, redis_url=REDIS_URL, redis_retry_after_s=0)
    first, second = await Services.start(settings), await Services.start(settings)
    try:
        assert first.view.version == second.view.version
        reached, release = hold_store(first, fail=fail)
        waiting = second_lookup(second)
        now = datetime.now(UTC)
        claimed = asyncio.create_task(recommendations_service.create_recommendation(first, REQUEST, "en", now))
        await asyncio.wait_for(reached.wait(), 30)
        asked = asyncio.create_task(recommendations_service.create_recommendation(second, REQUEST, "en", now))
        await asyncio.wait_for(waiting.wait(), 30)  # on its own, the second instance computes instead of waiting
        release.set()
        return await asyncio.gather(claimed, asked, return_exceptions=True)
    finally:
        await first.close()
        await second.close()


async def test_a_recommendation_another_instance_is_computing_is_taken_from_it(
    seeded_postgres: str, redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    ranks = Ranks(monkeypatch)
    computed, taken = await asked_while_the_first_stores(seeded_postgres, fail=False)
    assert ranks.calls == 1
    assert computed.outcome == "stored" and taken.outcome is None
    assert (taken.id, taken.body) == (computed.id, computed.body)


async def test_an_instance_computes_a_recommendation_itself_when_the_claimer_fails(
    seeded_postgres: str, redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    ranks = Ranks(monkeypatch)
    failed, computed = await asked_while_the_first_stores(seeded_postgres, fail=True)
    assert isinstance(failed, RuntimeError)
    assert computed.outcome == "stored"
    assert ranks.calls == 2  # told the claimer is done, found nothing cached, computed it
