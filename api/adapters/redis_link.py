"""One Redis connection pool with tight timeouts, no retries and a back-off after a failure (no retry storms)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from api.metrics import CACHE_ERRORS

log = logging.getLogger(__name__)

T = TypeVar("T")
REDIS_ERRORS = (RedisError, OSError, TimeoutError)


class RedisUnavailable(Exception):
    """Redis failed just now or is being skipped after a recent failure."""


class RedisLink:
    """Redis for optional work: a call that fails marks it unavailable for a while; callers fall back."""

    def __init__(self, url: str, *, timeout_s: float, retry_after_s: float) -> None:
        self.client = Redis.from_url(
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

    async def call(self, operation: str, run: Callable[[Redis], Awaitable[T]], *, probe: bool = False) -> T:
        """run(client) within the timeout; RedisUnavailable if skipped or failed (`probe` ignores the back-off)."""
        if not probe and not self.available:
            raise RedisUnavailable(operation)
        try:
            result = await asyncio.wait_for(run(self.client), self._timeout_s)
        except REDIS_ERRORS as error:
            if self.available:
                log.warning("redis %s failed, skipping redis for %.1fs: %s", operation, self._retry_after_s, error)
            self._skip_until = time.monotonic() + self._retry_after_s
            CACHE_ERRORS.labels("redis").inc()
            raise RedisUnavailable(operation) from error
        if probe:
            self._skip_until = 0.0
        return result

    async def close(self) -> None:
        with contextlib.suppress(RedisError, OSError):
            await self.client.aclose()
