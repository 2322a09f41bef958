"""One computation of an answer for the whole cluster: the first instance to miss it claims it on Redis, the others
wait for its announcement and take the answer from the shared cache.

Answers are keyed by catalog version, and under a stream of writes every instance serves the same new snapshot on
the same tick (catalog_ticks.py): every repeated request then misses on every instance at once. Without a claim,
each instance that misses it while another computes it computes and stores it again, and its write finds the answer
already stored.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TypeVar

from redis.asyncio import Redis

from api.adapters.cache import KEY_PREFIX
from api.adapters.redis_link import RedisLink, RedisUnavailable
from api.metrics import RECOMMENDATIONS_COMPUTED
from api.services.background import STOP_S, stop_tasks

T = TypeVar("T")

CHANNEL = "gpu-advisor:computed"
# An answer takes milliseconds to a few hundred to compute and store: longer than this, the claimer died or its
# answer is not coming (its store failed), and a waiter computes the answer itself.
WAIT_S = 2.0
# A claim outlives any wait: a claimer that died holds its claim this long at most.
CLAIM_TTL_MS = 10_000
# A claim's key: a marker that the key's answer is being computed, never the answer.
CLAIM_PREFIX = f"{KEY_PREFIX}computing:"


class ClusterFlight:
    """Claims on Redis, announcements on pub/sub, and this instance's waits for them."""

    def __init__(self, link: RedisLink, *, wait_s: float = WAIT_S) -> None:
        self._link = link
        self._counted = {how: RECOMMENDATIONS_COMPUTED.labels(how) for how in ("claimed", "taken", "after_wait")}
        self._wait_s = wait_s
        self._done: dict[str, asyncio.Event] = {}
        self._announcing: set[asyncio.Task[None]] = set()

    def announced(self, key: str) -> None:
        """Another instance finished computing `key` (a message of the subscription)."""
        if (event := self._done.get(key)) is not None:
            event.set()

    async def once(self, key: str, cached: Callable[[], Awaitable[T | None]], compute: Callable[[], Awaitable[T]]) -> T:
        """`compute()` here when this instance claims `key` first (or Redis fails); else what the claimer cached, once
        it says it is done. A claimer that fails, stores nothing or takes too long leaves this one to compute it.

        One waiter per key and instance: the caller's own single flight holds the others.
        """
        event = self._done[key] = asyncio.Event()
        try:
            if await self._claim(key):
                self._counted["claimed"].inc()
                try:
                    return await compute()
                finally:
                    self._announce(key)
            found = await cached()  # done between this instance's miss and its claim?
            if found is None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(event.wait(), self._wait_s)
                found = await cached()
            if found is not None:
                self._counted["taken"].inc()
                return found
            self._counted["after_wait"].inc()
            return await compute()
        finally:
            if self._done.get(key) is event:
                del self._done[key]

    async def close(self) -> None:
        """Let the announcements under way end (a claim left behind would hold the others' waits), then stop."""
        if self._announcing:
            await asyncio.wait(list(self._announcing), timeout=STOP_S)
        await stop_tasks(list(self._announcing), "computed announcements")

    async def _claim(self, key: str) -> bool:
        try:
            answer = await self._link.call(
                "claim", lambda client: client.set(_claim_key(key), b"1", nx=True, px=CLAIM_TTL_MS)
            )
        except RedisUnavailable:
            return True
        return answer is True

    def _announce(self, key: str) -> None:
        """Release the claim and tell the waiters, without holding up the answer (a lost message costs a waiter the
        wait, then a computation of its own)."""

        async def release(client: Redis) -> None:
            async with client.pipeline(transaction=False) as pipe:
                pipe.delete(_claim_key(key))
                pipe.publish(CHANNEL, key)
                await pipe.execute()

        async def announce() -> None:
            with contextlib.suppress(RedisUnavailable):
                await self._link.call("announce", release)

        task = asyncio.create_task(announce(), name="computed-announce")
        self._announcing.add(task)
        task.add_done_callback(self._announcing.discard)


def _claim_key(key: str) -> str:
    return CLAIM_PREFIX + key
