"""Under a stream of catalog versions from other instances, an instance reloads once per interval, not per version."""

from __future__ import annotations

import asyncio

from api.services.catalog_sync import CatalogSync


async def test_a_version_within_the_interval_waits_for_it_and_a_lone_one_does_not() -> None:
    current = ["v1"]
    reloads: list[str] = []

    async def reload() -> None:
        reloads.append(current[0])

    async def stored() -> str | None:
        return None

    sync = CatalogSync(
        redis_url=None,
        poll_s=3600,
        timeout_s=1,
        reload_interval_s=3600,
        stored_version=stored,
        current_version=lambda: current[0],
        reload=reload,
    )
    await sync._reload_if_changed("v2")
    assert reloads == ["v1"]  # the first change after a quiet spell is served at once

    waiting = asyncio.ensure_future(sync._reload_if_changed("v3"))
    for _ in range(10):
        await asyncio.sleep(0)
    assert reloads == ["v1"] and not waiting.done()
    waiting.cancel()

    await sync._reload_if_changed("v1")  # the version served: nothing to do, however soon
    assert reloads == ["v1"]
