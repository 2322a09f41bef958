"""Keeping every instance's catalog snapshot current: Redis pub/sub for speed, database polling as the fallback."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from redis.asyncio import Redis
from redis.exceptions import RedisError

from api.services.background import cancel_requested, stop_tasks

log = logging.getLogger(__name__)

CHANNEL = "gpu-advisor:catalog"


async def publish_version(client: Redis, version: str, timeout_s: float) -> None:
    """Tell the other instances a new catalog version is committed; if Redis is down they find out by polling."""
    try:
        await asyncio.wait_for(client.publish(CHANNEL, version), timeout_s)
    except (RedisError, OSError, TimeoutError) as error:
        log.warning("could not publish catalog version %s (other instances will poll): %s", version, error)


async def announce(redis_url: str | None, version: str, timeout_s: float) -> None:
    """Publish from a process that holds no subscription (the command line)."""
    if not redis_url:
        return
    client = Redis.from_url(redis_url, socket_connect_timeout=timeout_s)
    try:
        await publish_version(client, version, timeout_s)
    finally:
        with contextlib.suppress(RedisError, OSError):
            await client.aclose()


class CatalogSync:
    """Background tasks that reload the snapshot when another instance (or the CLI) changed the catalog."""

    def __init__(
        self,
        *,
        redis_url: str | None,
        poll_s: float,
        timeout_s: float,
        reload_interval_s: float = 0.0,
        stored_version: Callable[[], Awaitable[str | None]],
        current_version: Callable[[], str],
        reload: Callable[[], Awaitable[object]],
    ) -> None:
        self._redis = Redis.from_url(redis_url, socket_connect_timeout=timeout_s) if redis_url else None
        self._timeout_s = timeout_s
        self._poll_s = poll_s
        self._reload_interval_s = reload_interval_s
        self._next_reload_at = 0.0
        self._stored_version = stored_version
        self._current_version = current_version
        self._reload = reload
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        self._tasks.append(asyncio.create_task(self._poll(), name="catalog-poll"))
        if self._redis is not None:
            self._tasks.append(asyncio.create_task(self._listen(), name="catalog-listen"))

    async def stop(self) -> None:
        await stop_tasks(self._tasks, "catalog sync")
        self._tasks = []
        if self._redis is not None:
            with contextlib.suppress(RedisError, OSError):
                await self._redis.aclose()

    async def publish(self, version: str) -> None:
        """Tell the other instances about a change this instance committed."""
        if self._redis is not None:
            await publish_version(self._redis, version, self._timeout_s)

    async def _reload_if_changed(self, version: str | None) -> None:
        if version and version != self._current_version():
            # Under a stream of writes elsewhere, one reload per interval: each reload costs this instance a read of
            # the offers and a new snapshot, and the versions that arrive meanwhile are one reload.
            loop = asyncio.get_running_loop()
            if (wait := self._next_reload_at - loop.time()) > 0:
                await asyncio.sleep(wait)
            await self._reload()
            self._next_reload_at = loop.time() + self._reload_interval_s

    async def _poll(self) -> None:
        while True:
            await asyncio.sleep(self._poll_s)
            try:
                await self._reload_if_changed(await self._stored_version())
            except asyncio.CancelledError:
                raise
            except Exception as error:  # a failed poll must never end polling
                if cancel_requested():
                    raise asyncio.CancelledError from error
                log.debug("catalog poll failed: %s", error)

    async def _listen(self) -> None:
        assert self._redis is not None
        backoff = 0.5
        while True:
            try:
                async with self._redis.pubsub() as pubsub:
                    await pubsub.subscribe(CHANNEL)
                    backoff = 0.5
                    # redis-py's get_message can swallow a cancellation and return None: ask the task itself.
                    while not cancel_requested():
                        message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                        # A burst of writes elsewhere is one reload here: only the newest version matters.
                        while message and (newer := await pubsub.get_message(ignore_subscribe_messages=True)):
                            message = newer
                        if message and message.get("type") == "message":
                            data = message["data"]
                            await self._reload_if_changed(data.decode() if isinstance(data, bytes) else str(data))
                raise asyncio.CancelledError
            except asyncio.CancelledError:
                raise
            except Exception as error:  # Redis gone: polling covers the gap; retry with back-off
                if cancel_requested():
                    raise asyncio.CancelledError from error
                log.debug("catalog subscription lost: %s", error)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 10.0)
