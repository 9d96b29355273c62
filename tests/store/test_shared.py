"""The shared store on a real Redis that is slowed, hung, stopped and restarted: refused at once
while down, never counted from zero, back within about a second, releases replayed."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import anyio
import pytest

from app.store import RedisStore, SharedStore, StoreError, key
from tests.servers.redis_server import OwnRedis
from tests.servers.tcp_relay import relay
from tests.store.waiting import until

pytestmark = pytest.mark.anyio


async def test_refused_at_once_while_redis_is_down_and_back_within_seconds(tmp_path: Path) -> None:
    redis = OwnRedis(tmp_path, appendonly=True)
    redis.start()
    store = SharedStore(RedisStore(redis.url, timeout_s=1.0))
    pool = [key("pool", "day"), key("pool", "client")]
    try:
        assert await store.draw(pool, [10, 10], 60) == [1, 1]
        redis.stop()
        with pytest.raises(StoreError) as caught:
            await store.draw(pool, [10, 10], 60)
        assert caught.value.reason == "shared_state_unavailable"
        await until(lambda: store.degraded)
        started = time.monotonic()
        with pytest.raises(StoreError):
            await store.get(pool[0])
        assert time.monotonic() - started < 0.5  # (no connection tried: a dead Redis costs nothing)

        redis.start()  # the same data (append-only file): the pool goes on where it was
        recovered_s = await until(lambda: not store.degraded)
        assert recovered_s < 10  # (about a second: two answers 0.5 s apart)
        assert await store.draw(pool, [10, 10], 60) == [2, 2]  # never counted from zero
    finally:
        await store.aclose()
        redis.stop()


async def test_a_restarted_redis_is_not_an_outage(tmp_path: Path) -> None:
    """Regression: a pooled connection that a Redis restart reset failed the next call."""
    redis = OwnRedis(tmp_path, appendonly=True)
    redis.start()
    store = SharedStore(RedisStore(redis.url, timeout_s=1.0))
    try:
        await store.set(key("t", "a"), b"kept", 60)
        redis.stop()
        redis.start()
        assert await store.get(key("t", "a")) == b"kept"  # the stale connection's fault is retried once
        await anyio.sleep(0.1)
        assert not store.degraded and store.health.outages == 0
    finally:
        await store.aclose()
        redis.stop()


async def test_a_release_redis_did_not_take_is_replayed_when_it_answers(tmp_path: Path) -> None:
    redis = OwnRedis(tmp_path, appendonly=True)
    redis.start()
    store = SharedStore(RedisStore(redis.url, timeout_s=1.0))
    slot, lock, pool = key("slot", "host"), key("lock", "check"), [key("pool", "p")]
    try:
        assert await store.acquire_slot(slot, "mine", 1, 300)
        assert await store.set_nx(lock, b"token", 300)
        assert await store.draw(pool, [5], 300) == [1]
        redis.stop()
        await store.release_slot(slot, "mine")  # not taken: kept for later, nothing raised
        assert not await store.delete_if_equal(lock, b"token")
        await store.undraw(pool)
        await until(lambda: store.degraded)
        redis.start()
        await until(lambda: not store.degraded)
        await until(lambda: not store._pending)
        assert await store.acquire_slot(slot, "theirs", 1, 300)  # the slot was given back
        assert await store.set_nx(lock, b"other", 300)  # and the lock
        assert await store.counters(pool) == [0]  # and the draw
    finally:
        await store.aclose()
        redis.stop()


async def test_a_slow_redis_under_load_is_not_an_outage(tmp_path: Path) -> None:
    """Regression: with a 0.25 s timeout, ordinary load sent an instance to counts of its own."""
    redis = OwnRedis(tmp_path)
    redis.start()
    with relay(("127.0.0.1", redis.port)) as slow:
        slow.open = True
        slow.delay_s = 0.15  # each way: every answer later than the old timeout
        store = SharedStore(RedisStore(f"redis://127.0.0.1:{slow.port}/0"))
        pool = [key("pool", "slow")]
        try:
            answers = await asyncio.gather(*(store.draw(pool, [1000], 60) for _ in range(50)), return_exceptions=True)
            assert sorted(a[0] for a in answers if isinstance(a, list)) == list(range(1, 51)), answers
            assert not store.degraded and store.health.outages == 0
        finally:
            await store.aclose()
    redis.stop()


async def test_a_hung_redis_costs_one_bounded_wait_then_nothing(tmp_path: Path) -> None:
    redis = OwnRedis(tmp_path)
    redis.start()
    with relay(("127.0.0.1", redis.port)) as hung:
        hung.open = True
        store = SharedStore(RedisStore(f"redis://127.0.0.1:{hung.port}/0", timeout_s=0.5))
        try:
            await store.set(key("t", "h"), b"1", 60)
            hung.stall()  # connections stay open, nothing answers
            started = time.monotonic()
            with pytest.raises(StoreError):
                await store.get(key("t", "h"))
            assert time.monotonic() - started < 5  # one timeout (0.5 s), not a hang
            await until(lambda: store.degraded)
            hung.resume()
            await until(lambda: not store.degraded)
            assert await store.get(key("t", "h")) == b"1"
        finally:
            await store.aclose()
    redis.stop()
