"""One catalog read per tick for the whole cluster: the first instance to claim a tick reads the database and shares
the snapshot it read on Redis; the others serve that same snapshot.

Under a stream of writes every instance reloads on the same wall-clock ticks, but each reading the database itself
lands on whichever writes had committed at its own moment: three instances, three versions, and every answer cached
by version (recommendations, lists, comparisons) computed three times per tick instead of once. Serving one read
makes the versions equal, so what one instance computes on it the others take from the shared cache.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError

log = logging.getLogger(__name__)

CHANNEL = "gpu-advisor:catalog:ticks"

# A Redis command that failed (as against None, Redis's own answer for a key not set).
_FAILED = object()


class TickShare:
    """Claims, shares and adopts the snapshot of each tick."""

    def __init__(
        self,
        redis: Redis,
        *,
        interval_s: float,
        timeout_s: float,
        reload: Callable[[], Awaitable[object]],
        share: Callable[[], bytes | None],
        adopt: Callable[[bytes], Awaitable[bool]],
    ) -> None:
        self._redis = redis
        self._timeout_s = timeout_s
        # A follower waits for its leader at most until the next tick is due anyway.
        self._wait_s = interval_s
        # Long enough for every instance of the tick to have read it (a follower waits at most an interval), short
        # enough that a stream of ticks holds a few snapshots' offers in Redis, not one per tick of the stream.
        self._ttl_ms = int(max(3 * interval_s, 2.0) * 1000)
        self._reload = reload
        self._share = share
        self._adopt = adopt
        self._ready: dict[int, asyncio.Event] = {}

    def announced(self, tick: str) -> None:
        """The leader of `tick` says its snapshot is shared (a message of the subscription)."""
        if tick.isdigit() and (event := self._ready.get(int(tick))) is not None:
            event.set()

    async def reload(self, tick: int) -> None:
        """This instance's reload for `tick`: read and share it when first, else serve what the first one read."""
        key = f"{CHANNEL}:{tick}"
        ready = self._ready.setdefault(tick, asyncio.Event())
        try:
            claimed = await self._call(self._redis.set(f"{key}:lead", b"1", nx=True, px=self._ttl_ms))
            if claimed is not None:  # claimed, or Redis failed (nothing to share or adopt): the database's
                await self._reload()
                if claimed is True and (payload := self._share()) is not None:
                    await self._call(self._redis.set(key, payload, px=self._ttl_ms))
                    await self._call(self._redis.publish(CHANNEL, str(tick)))
                return
            payload = await self._call(self._redis.get(key))
            if payload is None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(ready.wait(), self._wait_s)
                payload = await self._call(self._redis.get(key))
            # A leader that failed, or a snapshot this instance cannot take (it lacks a change to the other tables):
            # the database's, as without Redis.
            if not isinstance(payload, bytes) or not await self._adopt(payload):
                await self._reload()
        finally:
            self._ready.pop(tick, None)

    async def _call(self, command: Awaitable[Any]) -> Any:
        """The command's answer, or _FAILED (the caller then reads the database itself)."""
        try:
            return await asyncio.wait_for(command, self._timeout_s)
        except (RedisError, OSError, TimeoutError) as error:
            log.debug("catalog tick not shared: %s", error)
            return _FAILED
