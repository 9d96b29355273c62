"""Stopping background tasks: a swallowed cancel is asked again, a task that will not end is left."""

from __future__ import annotations

import asyncio
import logging
import uuid

import pytest

from app.background import stop, stop_all
from app.store import RedisStore
from tests.servers.redis_server import shared_redis_url

pytestmark = pytest.mark.anyio


async def test_a_task_that_swallows_the_first_cancel_is_stopped() -> None:
    swallowed = 0

    async def stubborn() -> None:
        nonlocal swallowed
        while True:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                if swallowed:
                    raise
                swallowed += 1  # (as a library that catches the cancel and returns its reply)

    task = asyncio.create_task(stubborn())
    await asyncio.sleep(0)
    await asyncio.wait_for(stop(task), 30)
    assert task.cancelled() and swallowed == 1


async def test_a_task_that_never_ends_is_left_after_the_bound(caplog: pytest.LogCaptureFixture) -> None:
    release = asyncio.Event()

    async def deaf() -> None:
        while not release.is_set():
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                continue

    task = asyncio.create_task(deaf(), name="deaf")
    await asyncio.sleep(0)
    with caplog.at_level(logging.WARNING, logger="mcp_sonde.background"):
        await asyncio.wait_for(stop(task, within_s=0.3), 30)
    assert not task.done() and "deaf did not stop" in caplog.text
    release.set()
    await stop(task)
    assert task.done()


async def test_a_failed_task_s_exception_is_collected() -> None:
    async def fails() -> None:
        raise RuntimeError("gone")

    task = asyncio.create_task(fails())
    await asyncio.sleep(0)
    await stop_all([task])
    assert isinstance(task.exception(), RuntimeError)


async def test_a_redis_heartbeat_loop_cancelled_mid_reply_still_stops() -> None:
    """Regression: redis-py returns a reply to a cancelled call (redis/redis-py#2028), so a loop
    of heartbeats cancelled once ran on for ever and ``serve`` never exited after a failed start."""
    store = RedisStore(shared_redis_url(), namespace=f"test-{uuid.uuid4().hex[:12]}:")
    try:
        for attempt in range(60):

            async def beating() -> None:
                while True:
                    await store.heartbeat("instance", 30)
                    await asyncio.sleep(0.01)

            task = asyncio.create_task(beating())
            await asyncio.sleep(0.0001 * attempt)  # (cancels land at every point of the exchange)
            await asyncio.wait_for(stop(task), 30)
            assert task.done()
    finally:
        await store.aclose()
