"""Keeping every instance's catalog snapshot current: Redis pub/sub for speed, database polling as the fallback."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Awaitable, Callable, Mapping

from redis.asyncio import Redis
from redis.exceptions import RedisError

from api.services.background import cancel_requested, stop_tasks
from api.services.catalog_ticks import CHANNEL as TICKS
from api.services.catalog_ticks import TickShare

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
        share: Callable[[], bytes | None] | None = None,
        adopt: Callable[[bytes], Awaitable[bool]] | None = None,
        announcements: Mapping[str, Callable[[str], None]] | None = None,
    ) -> None:
        self._redis = Redis.from_url(redis_url, socket_connect_timeout=timeout_s) if redis_url else None
        self._ticks = (
            TickShare(
                self._redis,
                interval_s=reload_interval_s,
                timeout_s=timeout_s,
                reload=reload,
                share=share,
                adopt=adopt,
            )
            if self._redis is not None and share is not None and adopt is not None and reload_interval_s > 0
            else None
        )
        self._timeout_s = timeout_s
        self._poll_s = poll_s
        self._reload_interval_s = reload_interval_s
        self._next_reload_at = 0.0
        self._stored_version = stored_version
        self._current_version = current_version
        self._reload = reload
        # Other channels of this instance's one subscription, and what each message of theirs is handed to.
        self._announcements = dict(announcements or {})
        if self._ticks is not None:
            self._announcements[TICKS] = self._ticks.announced
        self._tasks: list[asyncio.Task[None]] = []
        self._publishing: set[asyncio.Task[None]] = set()
        # The interval (by tick) whose first change was told, the newest version not told yet, and the task that
        # tells it when the interval ends.
        self._published_window: int | None = None
        self._unpublished: str | None = None
        self._publish_later: asyncio.Task[None] | None = None
        # The one reload this instance owes at the end of the current interval, when a change came within it.
        self._later: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._tasks.append(asyncio.create_task(self._poll(), name="catalog-poll"))
        if self._redis is not None:
            self._tasks.append(asyncio.create_task(self._listen(), name="catalog-listen"))

    async def stop(self) -> None:
        later = [task for task in (self._later, self._publish_later) if task is not None]
        await stop_tasks([*self._tasks, *later, *self._publishing], "catalog sync")
        self._tasks, self._later, self._publish_later = [], None, None
        if self._redis is not None:
            with contextlib.suppress(RedisError, OSError):
                await self._redis.aclose()

    def publish(self, version: str) -> None:
        """Tell the other instances about a change this instance committed, without waiting for Redis's answer (the
        writer's client has its answer once the change is committed; a lost message is caught up by polling).

        One message per tick's interval: the first change of an interval is told at once, the others at its end
        with the newest version, which the other instances' reload on that tick reads anyway. A stream of writes
        then costs every instance a message per interval, not one per write.
        """
        if self._redis is None:
            return
        self._unpublished = version
        if self._publish_later is not None:
            return
        interval = self._reload_interval_s
        window = math.floor(time.time() / interval) if interval > 0 else None
        if window is None or window != self._published_window:
            self._published_window = window
            self._send(version)
        else:
            self._publish_later = asyncio.create_task(self._publish_at_end(window), name="catalog-publish-later")

    def _send(self, version: str) -> None:
        assert self._redis is not None
        self._unpublished = None
        task = asyncio.create_task(publish_version(self._redis, version, self._timeout_s), name="catalog-publish")
        self._publishing.add(task)
        task.add_done_callback(self._publishing.discard)

    async def _publish_at_end(self, window: int) -> None:
        await asyncio.sleep(max(0.0, (window + 1) * self._reload_interval_s - time.time()))
        self._publish_later, self._published_window = None, window + 1
        if self._unpublished:
            self._send(self._unpublished)

    async def reload_soon(self, now: Callable[[], Awaitable[object]] | None = None) -> bool:
        """Reload now (by `now` when given, else from the database) if the last reload began an interval ago or
        more; else once when the interval ends, from the database. True when it reloaded now.

        Every change, this instance's own writes as much as other instances' versions, goes through here: under a
        stream of writes each instance serves one new snapshot per interval, so what a new snapshot costs (the
        answers computed again on it, the reload, the wire objects) is paid per interval, not per write. A lone
        change is served at once.
        """
        loop = asyncio.get_running_loop()
        if self._later is None and loop.time() >= self._next_reload_at:
            self._next_reload_at = loop.time() + self._reload_interval_s
            await (now or self._reload)()
            return True
        if self._later is None:
            self._later = asyncio.create_task(self._reload_later(), name="catalog-reload-later")
        return False

    async def settled(self) -> None:
        """Wait for the reload this instance owes, if any (for a caller that must read what was written; a test
        client may run on a loop of its own)."""
        if (later := self._later) is None:
            return
        if later.get_loop() is asyncio.get_running_loop():
            await asyncio.shield(later)
        else:
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(asyncio.wait([later]), later.get_loop()))

    async def _reload_later(self) -> None:
        loop = asyncio.get_running_loop()
        wait = max(0.0, self._next_reload_at - loop.time())
        tick = 0
        if (interval := self._reload_interval_s) > 0:
            # On the wall clock's ticks, so that every instance reloads at the same moments and one of them reads
            # for all (catalog_ticks.py). A due time a hair past a tick is that tick: the loop's clock and the wall
            # clock drift apart.
            tick = math.ceil((time.time() + wait) / interval - 0.01)
            wait = max(wait, tick * interval - time.time())
        at = loop.time() + wait
        await asyncio.sleep(wait)
        # A change from here on needs a read that begins after it: the next tick's.
        self._next_reload_at = at + self._reload_interval_s
        self._later = None
        try:
            await (self._ticks.reload(tick) if self._ticks is not None else self._reload())
        except Exception as error:  # the poll catches up
            log.warning("catalog reload failed: %s", error)

    async def _reload_if_changed(self, version: str | None) -> None:
        if version and version != self._current_version():
            await self.reload_soon()

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
                    await pubsub.subscribe(CHANNEL, *self._announcements)
                    backoff = 0.5
                    # redis-py's get_message can swallow a cancellation and return None: ask the task itself.
                    while not cancel_requested():
                        message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                        # A burst of writes elsewhere is one reload here: only the newest version matters.
                        newest = None
                        while message:
                            if message.get("type") == "message":
                                channel, data = (_text(message[part]) for part in ("channel", "data"))
                                if (handle := self._announcements.get(channel)) is not None:
                                    handle(data)
                                else:
                                    newest = data
                            message = await pubsub.get_message(ignore_subscribe_messages=True)
                        if newest:
                            await self._reload_if_changed(newest)
                raise asyncio.CancelledError
            except asyncio.CancelledError:
                raise
            except Exception as error:  # Redis gone: polling covers the gap; retry with back-off
                if cancel_requested():
                    raise asyncio.CancelledError from error
                log.debug("catalog subscription lost: %s", error)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 10.0)


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
