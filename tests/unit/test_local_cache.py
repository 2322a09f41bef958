"""The in-process cache bounds its size."""

from __future__ import annotations

from api.adapters.cache import LocalCache


async def test_least_recently_used_entry_is_evicted() -> None:
    cache = LocalCache(max_entries=2)
    await cache.set("a", b"1", 60)
    await cache.set("b", b"2", 60)
    assert await cache.get("a") == b"1"
    await cache.set("c", b"3", 60)
    assert await cache.get("b") is None
    assert await cache.get("a") == b"1" and await cache.get("c") == b"3"


async def test_expired_entry_is_a_miss() -> None:
    cache = LocalCache(max_entries=2)
    await cache.set("a", b"1", 0)
    assert await cache.get("a") is None
