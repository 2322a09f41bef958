"""Under a stream of writes the instances reload on the same ticks, and one of them reads the catalog for all of
them: every instance then serves the same version, so what one computes on it the others take from the cache."""

from __future__ import annotations

import asyncio
import time

import pytest
from redis.asyncio import Redis

from api.services.catalog_sync import CHANNEL, CatalogSync
from tests.conftest import REDIS_URL

pytestmark = pytest.mark.integration


class Instance:
    """An instance's side of the sync: its served version, its database reads and what it adopted."""

    def __init__(self, name: str, database: list[str]) -> None:
        self.name = name
        self.database = database
        self.version = "v0"
        self.interval_s = 0.2
        self.reads: list[str] = []
        self.adopted: list[bytes] = []
        self.sync = CatalogSync(
            redis_url=REDIS_URL,
            poll_s=3600,
            timeout_s=2,
            reload_interval_s=self.interval_s,
            stored_version=self.stored,
            current_version=lambda: self.version,
            reload=self.reload,
            share=lambda: self.version.encode(),
            adopt=self.adopt,
        )

    async def stored(self) -> str | None:
        return self.database[-1]

    async def reload(self) -> None:
        self.reads.append(self.database[-1])
        self.version = self.database[-1]

    async def adopt(self, payload: bytes) -> bool:
        self.adopted.append(payload)
        self.version = payload.decode()
        return True


async def test_one_instance_reads_a_tick_and_the_others_serve_what_it_read(redis: Redis) -> None:
    database = ["v1"]
    instances = [Instance(name, database) for name in ("a", "b", "c")]
    for instance in instances:
        instance.sync.start()
    try:
        # A first change each: served at once. Then a stream: each instance owes one reload, at the same tick.
        for instance in instances:
            await instance.sync.reload_soon()
        for number in range(2, 6):
            database.append(f"v{number}")
            for instance in instances:
                await instance.sync.reload_soon()
        for instance in instances:
            await instance.sync.settled()
    finally:
        for instance in instances:
            await instance.sync.stop()

    tick_reads = [read for instance in instances for read in instance.reads[1:]]
    assert len(tick_reads) == 1  # one database read for the tick, by whichever instance claimed it
    assert sum(len(instance.adopted) for instance in instances) == 2
    assert {instance.version for instance in instances} == {tick_reads[0]} == {"v5"}


async def test_a_stream_of_writes_is_told_once_at_once_and_once_at_the_end_of_the_interval(redis: Redis) -> None:
    """The first change of an interval is told at once; the others are one message, the newest version, when the
    interval ends: the other instances' reload on that tick reads all of them anyway."""
    writer = Instance("writer", ["v0"])
    async with redis.pubsub() as pubsub:
        await pubsub.subscribe(CHANNEL)
        await pubsub.get_message(timeout=1.0)  # the subscription's confirmation
        # At the start of an interval, so that the stream does not straddle two.
        await asyncio.sleep(-time.time() % writer.interval_s)
        for number in range(1, 21):
            writer.sync.publish(f"v{number}")
        told = []
        while len(told) < 2 and (message := await pubsub.get_message(ignore_subscribe_messages=True, timeout=5.0)):
            told.append(message["data"].decode())
        await writer.sync.stop()
    assert told == ["v1", "v20"]
