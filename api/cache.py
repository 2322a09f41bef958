"""Response cache: Redis when configured, an in-process LRU otherwise; a failing Redis is skipped, never fatal."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from typing import Literal, Protocol

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from api.metrics import CACHE_ERRORS, CACHE_LOOKUPS

log = logging.getLogger(__name__)

CacheHealth = Literal["ok", "degraded", "local"]
KEY_PREFIX = "gpu-advisor:v1:"


class Cache(Protocol):
    """A byte cache with expiry; implementations never raise on backend failure."""

    backend: str

    async def get(self, key: str) -> bytes | None: ...

    async def set(self, key: str, value: bytes, ttl_s: int) -> None: ...

    async def health(self) -> CacheHealth: ...

    async def close(self) -> None: ...


class LocalCache:
    """Bounded in-process LRU, used when no REDIS_URL is set."""

    backend = "local"

    def __init__(self, max_entries: int) -> None:
        self._entries: OrderedDict[str, tuple[float, bytes]] = OrderedDict()
        self._max_entries = max(1, max_entries)

    async def get(self, key: str) -> bytes | None:
        entry = self._entries.get(key)
        if entry is None or entry[0] <= time.monotonic():
            if entry is not None:
                del self._entries[key]
            CACHE_LOOKUPS.labels(self.backend, "miss").inc()
            return None
        self._entries.move_to_end(key)
        CACHE_LOOKUPS.labels(self.backend, "hit").inc()
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
    """Redis with tight timeouts, no retries and a short back-off after a failure (no retry storms)."""

    backend = "redis"

    def __init__(self, url: str, *, timeout_s: float, retry_after_s: float) -> None:
        self._client = Redis.from_url(
            url,
            socket_timeout=timeout_s,
            socket_connect_timeout=timeout_s,
            retry=Retry(NoBackoff(), 0),
            health_check_interval=0,
        )
        self._timeout_s = timeout_s
        self._retry_after_s = retry_after_s
        self._skip_until = 0.0

    @property
    def available(self) -> bool:
        return time.monotonic() >= self._skip_until

    def _failed(self, operation: str, error: BaseException) -> None:
        if self.available:
            log.warning("redis %s failed, skipping redis for %.1fs: %s", operation, self._retry_after_s, error)
        self._skip_until = time.monotonic() + self._retry_after_s
        CACHE_ERRORS.labels(self.backend).inc()

    async def get(self, key: str) -> bytes | None:
        if not self.available:
            CACHE_LOOKUPS.labels(self.backend, "skipped").inc()
            return None
        try:
            value = await asyncio.wait_for(self._client.get(KEY_PREFIX + key), self._timeout_s)
        except (RedisError, OSError, TimeoutError) as error:
            self._failed("get", error)
            return None
        CACHE_LOOKUPS.labels(self.backend, "miss" if value is None else "hit").inc()
        return value if isinstance(value, bytes) else None

    async def set(self, key: str, value: bytes, ttl_s: int) -> None:
        if not self.available:
            return
        try:
            await asyncio.wait_for(self._client.set(KEY_PREFIX + key, value, ex=ttl_s), self._timeout_s)
        except (RedisError, OSError, TimeoutError) as error:
            self._failed("set", error)

    async def health(self) -> CacheHealth:
        try:
            await asyncio.wait_for(self._client.ping(), self._timeout_s)
        except (RedisError, OSError, TimeoutError) as error:
            self._failed("ping", error)
            return "degraded"
        self._skip_until = 0.0
        return "ok"

    async def close(self) -> None:
        with contextlib.suppress(RedisError, OSError):
            await self._client.aclose()
