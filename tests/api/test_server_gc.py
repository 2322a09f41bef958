"""The served app keeps what its startup built out of the cyclic garbage collector's sight."""

from __future__ import annotations

import gc
from typing import Any

from api.server import server_config
from api.settings import Settings


async def test_what_startup_built_is_frozen_once_the_app_has_started() -> None:
    seen_before_complete: list[int] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        assert scope["type"] == "lifespan"
        await receive()
        seen_before_complete.append(gc.get_freeze_count())
        await send({"type": "lifespan.startup.complete"})

    messages = iter([{"type": "lifespan.startup"}])
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return next(messages)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    config = server_config(app, Settings(), host="127.0.0.1", port=0, lifespan="on")
    config.load()
    gc.unfreeze()
    try:
        await config.loaded_app({"type": "lifespan", "asgi": {"version": "3.0"}}, receive, send)
        assert seen_before_complete == [0]
        assert gc.get_freeze_count() > 0
        assert sent == [{"type": "lifespan.startup.complete"}]
    finally:
        gc.unfreeze()
