"""Stopping a background task for certain, even when something it awaits swallows the cancel.

A cancel is a request: ``task.cancel()`` throws :class:`asyncio.CancelledError` into whatever the
task awaits, and a library may catch it. redis-py's asyncio client does so when the cancel lands
while a reply is being read (redis/redis-py#2028): the command returns its reply, the task runs
on, and an ``await task`` after one ``cancel()`` waits for ever (a loop that beats every few
seconds never ends, and neither does the process that waits for it at shutdown).

:func:`stop` asks again until the task has ended, within a bound; a task that still runs after
it is left behind with one log line, so a shutdown is never held up by it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

logger = logging.getLogger("mcp_sonde.background")

#: How often a task that has not ended is asked again, in seconds.
RETRY_S = 0.05


async def stop(task: asyncio.Task[Any] | None, within_s: float = 5.0) -> None:
    """Cancel ``task`` and wait for it to end, cancelling again each time the request was
    swallowed; after ``within_s`` seconds it is left running (and logged). Its outcome (a
    result, an exception) is collected and dropped: it was being stopped."""
    if task is None:
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while not task.done():
        task.cancel()
        left = deadline - loop.time()
        if left <= 0:
            logger.warning("background task %s did not stop within %.1f s", task.get_name(), within_s)
            return
        await asyncio.wait({task}, timeout=min(left, RETRY_S))
    if not task.cancelled():
        task.exception()  # (retrieved, so asyncio does not report it as never retrieved)


async def stop_all(tasks: list[asyncio.Task[Any]], within_s: float = 5.0) -> None:
    """:func:`stop` each of ``tasks``, together, within one bound."""
    if tasks:
        await asyncio.gather(*(stop(task, within_s) for task in tasks))
