"""Waiting for a store's state to change: polled, within a bound sized for a loaded machine."""

from __future__ import annotations

import time
from collections.abc import Callable

import anyio


async def until(condition: Callable[[], bool], within_s: float = 30, every_s: float = 0.02) -> float:
    """Seconds until ``condition()`` holds; :class:`TimeoutError` after ``within_s``."""
    started = time.monotonic()
    with anyio.fail_after(within_s):
        while True:
            if condition():
                return time.monotonic() - started
            await anyio.sleep(every_s)
