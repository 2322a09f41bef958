"""Response cache: Redis when configured, an in-process LRU otherwise; a failing Redis is skipped, never fatal."""

from __future__ import annotations

import contextlib
import time
from collections import OrderedDict
from typing import Literal, Protocol

from api.adapters.redis_link import RedisLink, RedisUnavailable
from api.metrics import CACHE_LOOKUPS

CacheHealth = Literal["ok", "degraded", "local"]
KEY_PREFIX = "gpu-advisor:v1:"
# Local copies of shared entries live briefly: memory is bounded by the LRU, and Redis stays the one that expires.
LOCAL_COPY_TTL_S = 300


class Cache(Protocol):
    """A byte cache with expiry; implementations never raise on backend failure."""

    backend: str

    async def get(self, key: str) -> bytes | None: ...

    async def set(self, key: str, value: bytes, ttl_s: int) -> None: ...

    async def health(self) -> CacheHealth: ...

    async def close(self) -> None: ...


class LocalCache:
    """Bounded in-process LRU: the cache without REDIS_URL, the first tier with it."""

    def __init__(self, max_entries: int, *, backend: str = "local") -> None:
        self.backend = backend
        self._entries: OrderedDict[str, tuple[float, bytes]] = OrderedDict()
        self._max_entries = max(1, max_entries)
        # Looked up once: finding a labelled child costs more than the lookup it counts.
        self._hit = CACHE_LOOKUPS.labels(backend, "hit")
        self._miss = CACHE_LOOKUPS.labels(backend, "miss")

    async def get(self, key: str) -> bytes | None:
        entry = self._entries.get(key)
        if entry is None or entry[0] <= time.monotonic():
            if entry is not None:
                del self._entries[key]
            self._miss.inc()
            return None
        self._entries.move_to_end(key)
        self._hit.inc()
        return entry[1]

    async def set(self, key: str, value: bytes, ttl_s: int) -> None:
        self._entries[key] = (time.monotonic() + ttl_s, value)
        self._entries.move_to_end(key)
        while len(self._entries) > self._max_entries:
            self._entries.popitem(last=False)

    async def health(self) -> CacheHealth:
        return "local"

    async def close(self) -> None:
        self._entries.clear()


class RedisCache:
    """Responses in Redis, shared by every instance; a failing Redis makes every lookup a miss."""

    backend = "redis"

    def __init__(self, link: RedisLink) -> None:
        self._link = link

    async def get(self, key: str) -> bytes | None:
        try:
            value = await self._link.call("get", lambda client: client.get(KEY_PREFIX + key))
        except RedisUnavailable:
            CACHE_LOOKUPS.labels(self.backend, "skipped").inc()
            return None
        CACHE_LOOKUPS.labels(self.backend, "miss" if value is None else "hit").inc()
        return value if isinstance(value, bytes) else None

    async def set(self, key: str, value: bytes, ttl_s: int) -> None:
        with contextlib.suppress(RedisUnavailable):
            await self._link.call("set", lambda client: client.set(KEY_PREFIX + key, value, ex=ttl_s))

    async def health(self) -> CacheHealth:
        try:
            await self._link.call("ping", lambda client: client.ping(), probe=True)
        except RedisUnavailable:
            return "degraded"
        return "ok"

    async def close(self) -> None:
        await self._link.close()


class TieredCache:
    """This process's LRU in front of Redis: every key names a catalog version, so a copy here is never stale."""

    backend = "redis"

    def __init__(self, local: LocalCache, shared: RedisCache) -> None:
        self._local = local
        self._shared = shared

    async def get(self, key: str) -> bytes | None:
        value = await self._local.get(key)
        if value is None:
            value = await self._shared.get(key)
            if value is not None:
                await self._local.set(key, value, LOCAL_COPY_TTL_S)
        return value

    async def set(self, key: str, value: bytes, ttl_s: int) -> None:
        await self._local.set(key, value, min(ttl_s, LOCAL_COPY_TTL_S))
        await self._shared.set(key, value, ttl_s)

    async def health(self) -> CacheHealth:
        return await self._shared.health()

    async def close(self) -> None:
        await self._local.close()
        await self._shared.close()
