"""Background tasks that stop when asked, even when a library swallowed the cancellation."""

from __future__ import annotations

import asyncio
import logging

log = logging.getLogger(__name__)

# How long stop() waits for its tasks to end after cancelling them, before it leaves them behind.
STOP_S = 5.0


def cancel_requested() -> bool:
    """Whether this task was asked to stop, even if a library turned the CancelledError into something else.

    Python 3.11's asyncio.timeout turns a cancellation that a driver swallowed into TimeoutError when its deadline
    passes; a loop that catches Exception would then run on and the process would never shut down.
    """
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


async def stop_tasks(tasks: list[asyncio.Task[None]], what: str) -> None:
    """Cancel background tasks and wait for them a bounded time; never swallows the caller's own cancellation."""
    for task in tasks:
        task.cancel()
    if not tasks:
        return
    _, pending = await asyncio.wait(tasks, timeout=STOP_S)
    if pending:
        log.error("%s: %d background tasks did not stop: %s", what, len(pending), [t.get_name() for t in pending])
