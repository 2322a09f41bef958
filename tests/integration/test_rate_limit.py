"""Rate limiting: the GCRA arithmetic, the per-instance limiter, the middleware, and the budget shared through Redis.

The arithmetic and the in-process limiter run on a clock the test moves; the Redis tests use a rate of one request a
minute so that no budget refills while a test runs. Only the tests on Redis need the services.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import SimpleNamespace
from typing import Any, cast

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from litestar import Litestar
from litestar.testing import AsyncTestClient
from redis.asyncio import Redis

from api.app import create_app
from api.http import rate_limit
from api.http.rate_limit import KEY_PREFIX, LocalLimiter, client_identity, gcra
from api.settings import Settings
from tests.conftest import REDIS_URL
from tests.integration.conftest import OwnRedis, wait_for_ping

PROPERTY = settings(max_examples=50, deadline=None, derandomize=True, database=None)
DEADLINE_S = 15.0
EXEMPT = ["/health/live", "/health/ready", "/metrics", "/schema", "/schema/openapi.json"]
LIMITED_READ = "/v1/providers"


class Clock:
    """Stands in for time.monotonic in api.http.rate_limit only (the event loop keeps the real one)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(rate_limit, "time", SimpleNamespace(monotonic=fake.monotonic))
    return fake


# --- gcra() ------------------------------------------------------------------------------------------------------


def test_a_new_client_gets_its_burst_then_waits_one_interval() -> None:
    tat, now, interval, burst = 0.0, 100.0, 2.0, 3
    remaining = []
    for _ in range(burst):
        decision, tat = gcra(tat, now, interval, burst)
        assert decision.allowed and decision.retry_after_s == 0
        remaining.append(decision.remaining)
    assert remaining == [2, 1, 0]
    denied, unchanged = gcra(tat, now, interval, burst)
    assert not denied.allowed and denied.remaining == 0 and denied.retry_after_s == pytest.approx(interval)
    assert unchanged == tat  # a refused request costs nothing
    early, _ = gcra(tat, now + interval - 0.001, interval, burst)
    assert not early.allowed and early.retry_after_s == pytest.approx(0.001)
    on_time, _ = gcra(tat, now + interval, interval, burst)
    assert on_time.allowed and on_time.remaining == 0


def test_an_idle_client_gets_back_its_burst_and_no_more() -> None:
    tat, interval, burst = 0.0, 1.0, 4
    for _ in range(burst):
        _, tat = gcra(tat, 10.0, interval, burst)
    later = 10.0 + 3600.0
    allowed = 0
    while True:
        decision, tat = gcra(tat, later, interval, burst)
        if not decision.allowed:
            break
        allowed += 1
    assert allowed == burst


def test_requests_at_the_rate_are_always_allowed() -> None:
    tat, interval = 0.0, 0.5
    for step in range(1000):
        decision, tat = gcra(tat, 50.0 + step * interval, interval, 1)
        assert decision.allowed, step


@PROPERTY
@given(
    gaps=st.lists(st.integers(min_value=0, max_value=5_000), min_size=1, max_size=200),
    interval=st.integers(min_value=1, max_value=2_000),
    burst=st.integers(min_value=1, max_value=20),
)
def test_no_window_ever_allows_more_than_burst_plus_its_refill(gaps: list[int], interval: int, burst: int) -> None:
    # Whole milliseconds: float arithmetic stays exact, so the bound is checked without tolerance.
    now, tat, allowed_at = 0, 0.0, []
    for gap in gaps:
        now += gap
        decision, tat = gcra(tat, float(now), float(interval), burst)
        if decision.allowed:
            allowed_at.append(now)
    for first, start in enumerate(allowed_at):
        for last in range(first, len(allowed_at)):
            window = allowed_at[last] - start
            assert last - first + 1 <= burst + window // interval, (start, allowed_at[last], interval, burst)


@PROPERTY
@given(
    gaps=st.lists(st.integers(min_value=0, max_value=3_000), min_size=1, max_size=60),
    interval=st.integers(min_value=1, max_value=1_000),
    burst=st.integers(min_value=1, max_value=10),
)
def test_remaining_and_retry_after_tell_the_truth(gaps: list[int], interval: int, burst: int) -> None:
    now, tat = 0, 0.0
    for gap in gaps:
        now += gap
        decision, tat = gcra(tat, float(now), float(interval), burst)
        if decision.allowed:
            # Exactly `remaining` more requests are allowed at this instant.
            probe, extra = tat, 0
            while (step := gcra(probe, float(now), float(interval), burst))[0].allowed:
                probe, extra = step[1], extra + 1
            assert extra == decision.remaining
        else:
            # Refused until retry_after has passed, allowed once it has.
            assert decision.retry_after_s > 0
            assert gcra(tat, now + decision.retry_after_s, float(interval), burst)[0].allowed
            assert not gcra(tat, now + decision.retry_after_s * 0.99, float(interval), burst)[0].allowed


# --- LocalLimiter and client identity ----------------------------------------------------------------------------


def test_the_local_limiter_keeps_one_budget_per_client(clock: Clock) -> None:
    limiter = LocalLimiter(interval=10.0, burst=2)
    assert [limiter.hit("a").allowed for _ in range(3)] == [True, True, False]
    assert [limiter.hit("b").allowed for _ in range(3)] == [True, True, False]
    refused = limiter.hit("a")
    assert refused.retry_after_s == pytest.approx(10.0)
    clock.now += 9.9
    assert not limiter.hit("a").allowed
    clock.now += 0.1
    assert limiter.hit("a").allowed and not limiter.hit("a").allowed
    clock.now += 25.0
    assert [limiter.hit("b").allowed for _ in range(3)] == [True, True, False]


def test_the_local_limiter_forgets_the_least_recent_clients_beyond_its_capacity(clock: Clock) -> None:
    limiter = LocalLimiter(interval=60.0, burst=1, max_clients=2)
    assert limiter.hit("a").allowed and limiter.hit("b").allowed
    assert not limiter.hit("a").allowed  # a is now the most recent, b the least
    assert limiter.hit("c").allowed  # b is forgotten
    assert not limiter.hit("a").allowed and not limiter.hit("c").allowed
    assert limiter.hit("b").allowed


def scope_with(headers: list[tuple[bytes, bytes]], client: tuple[str, int] | None = ("10.0.0.1", 5000)) -> Any:
    return {"type": "http", "headers": headers, "client": client}


def test_a_configured_key_is_its_own_client_and_other_keys_are_not() -> None:
    keys = ("key-one", "key-two")
    one = client_identity(scope_with([(b"x-api-key", b"key-one")]), keys)
    assert one.startswith("key:") and "key-one" not in one
    assert client_identity(scope_with([(b"X-API-Key", b"key-one")], ("10.9.9.9", 1)), keys) == one
    assert client_identity(scope_with([(b"x-api-key", b"key-two")]), keys) not in (one, "ip:10.0.0.1")
    assert client_identity(scope_with([(b"x-api-key", b"made-up")]), keys) == "ip:10.0.0.1"
    assert client_identity(scope_with([(b"x-api-key", b"key-one")]), ()) == "ip:10.0.0.1"
    assert client_identity(scope_with([]), keys) == "ip:10.0.0.1"
    assert client_identity(scope_with([], None), keys) == "ip:unknown"


# --- The middleware, in process ----------------------------------------------------------------------------------

KEY = "rate-limit-key"


@asynccontextmanager
async def limited_app(url: str, per_minute: int, burst: int, **extra: Any) -> AsyncIterator[Litestar]:
    app = create_app(
        Settings(database_url=url, rate_limit_per_minute=per_minute, rate_limit_burst=burst, api_keys=(KEY,), **extra)
    )
    async with AsyncTestClient(app=app):  # runs the lifespan
        yield app


def peer(app: Litestar, address: str) -> httpx.AsyncClient:
    """A client whose requests come from `address`."""
    transport = httpx.ASGITransport(app=cast(Any, app), client=(address, 40000))
    return httpx.AsyncClient(transport=transport, base_url="http://testserver")


def statuses(responses: list[httpx.Response]) -> list[int]:
    return [response.status_code for response in responses]


async def test_a_flood_gets_exactly_the_burst_and_other_clients_are_unaffected(
    seeded_sqlite_url: str, clock: Clock
) -> None:
    async with (
        limited_app(seeded_sqlite_url, per_minute=60, burst=20) as app,
        peer(app, "10.0.0.1") as flooder,
        peer(app, "10.0.0.2") as bystander,
    ):
        flood = await asyncio.gather(*(flooder.get(LIMITED_READ) for _ in range(300)))
        assert sorted(statuses(flood)) == [200] * 20 + [429] * 280
        calm = await asyncio.gather(*(bystander.get(LIMITED_READ) for _ in range(20)))
        assert statuses(calm) == [200] * 20
        assert (await bystander.get(LIMITED_READ)).status_code == 429
        clock.now += 1.0  # one interval: exactly one more request each
        assert statuses([await flooder.get(LIMITED_READ) for _ in range(2)]) == [200, 429]
        assert statuses([await bystander.get(LIMITED_READ) for _ in range(2)]) == [200, 429]


async def test_answers_carry_the_limit_and_a_429_says_when_to_retry(seeded_sqlite_url: str, clock: Clock) -> None:
    async with limited_app(seeded_sqlite_url, per_minute=30, burst=3) as app, peer(app, "10.0.1.1") as client:
        allowed = [await client.get(LIMITED_READ) for _ in range(3)]
        assert statuses(allowed) == [200, 200, 200]
        assert [response.headers["ratelimit-remaining"] for response in allowed] == ["2", "1", "0"]
        assert all(response.headers["ratelimit-limit"] == "30" for response in allowed)
        refused = await client.post("/v1/tco", json={"gpu": "h100-sxm"})
        assert refused.status_code == 429 and refused.headers["content-type"].startswith("application/problem+json")
        assert int(refused.headers["retry-after"]) == 2  # one interval at 30 a minute
        assert refused.headers["ratelimit-limit"] == "30" and refused.headers["ratelimit-remaining"] == "0"
        problem = refused.json()
        assert problem["status"] == 429 and problem["type"] == "/problems/rate-limited" and "30" in problem["detail"]
        clock.now += 0.25
        almost = await client.get(LIMITED_READ)
        assert almost.status_code == 429 and int(almost.headers["retry-after"]) == 2  # 1.75 s rounds up
        clock.now += 1.5
        last = await client.get(LIMITED_READ)
        assert last.status_code == 429 and int(last.headers["retry-after"]) == 1  # 0.25 s says 1, never 0
        clock.now += 0.25
        assert (await client.get(LIMITED_READ)).status_code == 200


async def test_probes_metrics_and_the_schema_are_never_limited_and_cost_nothing(
    seeded_sqlite_url: str, clock: Clock
) -> None:
    async with limited_app(seeded_sqlite_url, per_minute=1, burst=2) as app, peer(app, "10.0.2.1") as client:
        for _ in range(5):
            for path in EXEMPT:
                response = await client.get(path)
                assert response.status_code == 200, (path, response.text[:200])
        assert statuses([await client.get(LIMITED_READ) for _ in range(3)]) == [200, 200, 429]
        for path in EXEMPT:
            assert (await client.get(path)).status_code == 200, path


async def test_an_api_key_has_its_own_budget_and_an_unknown_key_does_not(seeded_sqlite_url: str, clock: Clock) -> None:
    async with (
        limited_app(seeded_sqlite_url, per_minute=1, burst=2) as app,
        peer(app, "10.0.3.1") as first,
        peer(app, "10.0.3.2") as second,
    ):
        assert statuses([await first.get(LIMITED_READ) for _ in range(3)]) == [200, 200, 429]
        for made_up in ("made-up", KEY.upper(), KEY + " ", ""):
            answer = await first.get(LIMITED_READ, headers={"X-API-Key": made_up})
            assert answer.status_code == 429, made_up
        key = {"X-API-Key": KEY}
        # The key's budget is its own, and the same from any address.
        assert (await first.get(LIMITED_READ, headers=key)).status_code == 200
        assert (await second.get(LIMITED_READ, headers=key)).status_code == 200
        assert (await second.get(LIMITED_READ, headers=key)).status_code == 429
        # The second address still has its own budget without the key.
        assert statuses([await second.get(LIMITED_READ) for _ in range(3)]) == [200, 200, 429]


async def test_limiting_off_means_no_limit_and_no_headers(seeded_sqlite_url: str) -> None:
    async with limited_app(seeded_sqlite_url, per_minute=0, burst=1) as app, peer(app, "10.0.4.1") as client:
        responses = await asyncio.gather(*(client.get(LIMITED_READ) for _ in range(150)))
    assert set(statuses(list(responses))) == {200}
    assert "ratelimit-remaining" not in responses[0].headers


# --- Shared through Redis ----------------------------------------------------------------------------------------


def redis_app(database_url: str, redis_url: str, key: str) -> Litestar:
    # One request a minute refills nothing while the test runs: every count below is exact.
    return create_app(
        Settings(
            database_url=database_url,
            redis_url=redis_url,
            api_keys=(key,),
            rate_limit_per_minute=1,
            rate_limit_burst=5,
            redis_retry_after_s=0,
        )
    )


async def ready_redis(client: AsyncTestClient[Litestar]) -> str:
    return str((await client.get("/health/ready")).json()["redis"])


async def wait_for_redis_ok(*clients: AsyncTestClient[Litestar]) -> None:
    deadline = time.monotonic() + DEADLINE_S
    states: list[str] = []
    while time.monotonic() < deadline:
        states = [await ready_redis(client) for client in clients]
        if all(state == "ok" for state in states):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the instances never saw Redis again: {states}")


@pytest.mark.integration
async def test_two_instances_share_one_budget_through_redis(seeded_sqlite_url: str, redis: Redis) -> None:
    key = f"shared-{uuid.uuid4().hex}"  # a bucket of this test's own on the machine's Redis
    headers = {"X-API-Key": key}
    async with (
        AsyncTestClient(app=redis_app(seeded_sqlite_url, REDIS_URL, key)) as first,
        AsyncTestClient(app=redis_app(seeded_sqlite_url, REDIS_URL, key)) as second,
    ):
        assert await ready_redis(first) == "ok" and await ready_redis(second) == "ok"
        answers = [await first.get(LIMITED_READ, headers=headers) for _ in range(3)]
        answers += [await second.get(LIMITED_READ, headers=headers) for _ in range(3)]
        assert statuses(answers) == [200, 200, 200, 200, 200, 429], [r.text[:200] for r in answers]
        assert [r.headers["ratelimit-remaining"] for r in answers] == ["4", "3", "2", "1", "0", "0"]
        refused = answers[-1]
        assert refused.headers["content-type"].startswith("application/problem+json")
        assert int(refused.headers["retry-after"]) >= 1 and json.loads(refused.text)["status"] == 429
        assert (await first.get(LIMITED_READ, headers=headers)).status_code == 429
        # Another client (no key: the peer address) has a budget of its own on the same Redis.
        assert (await second.get(LIMITED_READ)).status_code == 200
    stored = [name async for name in redis.scan_iter(KEY_PREFIX + "*")]
    assert len(stored) == 2 and all(key.encode() not in name for name in stored)
    assert all([await redis.pttl(name) > 0 for name in stored])  # each bucket expires on its own


@pytest.mark.integration
async def test_without_redis_each_instance_limits_alone_and_the_shared_budget_returns(
    seeded_sqlite_url: str, own_redis: OwnRedis
) -> None:
    await wait_for_ping(own_redis.url)
    key = "own-redis-key"
    headers = {"X-API-Key": key}
    async with (
        AsyncTestClient(app=redis_app(seeded_sqlite_url, own_redis.url, key)) as first,
        AsyncTestClient(app=redis_app(seeded_sqlite_url, own_redis.url, key)) as second,
    ):
        shared = [await first.get(LIMITED_READ, headers=headers) for _ in range(3)]
        shared += [await second.get(LIMITED_READ, headers=headers) for _ in range(3)]
        assert statuses(shared) == [200, 200, 200, 200, 200, 429]

        own_redis.kill()
        # Each instance falls back to its own limiter, with a whole burst of its own; nothing fails.
        alone_first = [await first.get(LIMITED_READ, headers=headers) for _ in range(6)]
        alone_second = [await second.get(LIMITED_READ, headers=headers) for _ in range(6)]
        assert statuses(alone_first) == [200] * 5 + [429], [r.text[:200] for r in alone_first]
        assert statuses(alone_second) == [200] * 5 + [429], [r.text[:200] for r in alone_second]
        assert int(alone_first[-1].headers["retry-after"]) >= 1
        assert await ready_redis(first) == "degraded"

        own_redis.start()
        await wait_for_ping(own_redis.url)
        await wait_for_redis_ok(first, second)
        # Both local budgets are spent, so these 200s come from the shared budget (a fresh one: Redis restarted).
        back = [await first.get(LIMITED_READ, headers=headers) for _ in range(3)]
        back += [await second.get(LIMITED_READ, headers=headers) for _ in range(3)]
        assert statuses(back) == [200, 200, 200, 200, 200, 429], [r.text[:200] for r in back]
        assert [r.headers["ratelimit-remaining"] for r in back] == ["4", "3", "2", "1", "0", "0"]
