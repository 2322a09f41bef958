"""Under a stream of changes, this instance's own writes and other instances' versions alike, an instance serves one
new snapshot per interval, not one per change; a lone change is served at once."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from api.services.catalog_sync import CatalogSync


def syncing(interval_s: float, current: list[str], reloads: list[str]) -> CatalogSync:
    async def reload() -> None:
        reloads.append("database")

    async def stored() -> str | None:
        return None

    return CatalogSync(
        redis_url=None,
        poll_s=3600,
        timeout_s=1,
        reload_interval_s=interval_s,
        stored_version=stored,
        current_version=lambda: current[0],
        reload=reload,
    )


def own_change(reloads: list[str]) -> Callable[[], Awaitable[None]]:
    async def serve() -> None:
        reloads.append("own change")

    return serve


async def test_a_stream_of_changes_is_one_reload_at_the_end_of_the_interval() -> None:
    current, reloads = ["v1"], []
    sync = syncing(3600, current, reloads)
    assert await sync.reload_soon(own_change(reloads))
    assert reloads == ["own change"]  # the first change after a quiet spell is served at once

    for number in range(20):
        assert not await sync.reload_soon(own_change(reloads))
        await sync._reload_if_changed(f"v{number + 2}")
    assert reloads == ["own change"]  # all of them wait for the interval's end, as one reload

    await sync._reload_if_changed("v1")  # the version served: nothing to do, however soon
    await sync.stop()
    assert reloads == ["own change"]


async def test_what_waited_is_one_reload_from_the_database_when_the_interval_ends() -> None:
    current, reloads = ["v1"], []
    sync = syncing(0.05, current, reloads)
    await sync.reload_soon(own_change(reloads))
    for _ in range(5):
        await sync.reload_soon(own_change(reloads))
    await sync.settled()
    # The changes that waited are read back with whatever else was committed meanwhile: one read, not five.
    assert reloads == ["own change", "database"]
    await sync.stop()
