"""Redis stopped and restarted for real: the resilient store falls back and recovers by itself."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from app.store import RedisStore, ResilientStore, key
from tests.servers.redis_server import OwnRedis

pytestmark = pytest.mark.anyio


async def test_fallback_while_redis_is_down_and_recovery(tmp_path: Path) -> None:
    redis = OwnRedis(tmp_path)
    redis.start()
    store = ResilientStore(RedisStore(redis.url, timeout_s=0.2), cooldown_s=0.5)
    try:
        k = key("t", "x")
        await store.set(k, b"in-redis", 60)
        assert await store.get(k) == b"in-redis" and not store.degraded

        redis.stop()
        started = time.monotonic()
        await store.set(k, b"in-memory", 60)  # fails over, does not raise
        assert time.monotonic() - started < 1.0
        assert store.degraded
        assert await store.get(k) == b"in-memory"
        assert await store.draw([key("pool", "x")], [1], 60) == [1]

        redis.start()  # a fresh, empty Redis on the same port
        await anyio.sleep(0.6)  # the breaker's cooldown
        assert await store.get(k) is None  # Redis is the truth again
        assert not store.degraded
        await store.set(k, b"back", 60)
        direct = RedisStore(redis.url)
        assert await direct.get(k) == b"back"
        await direct.aclose()
    finally:
        await store.aclose()
        redis.stop()


async def test_hung_redis_costs_a_bounded_time(tmp_path: Path) -> None:
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)  # accepts connections, never answers
    port = listener.getsockname()[1]
    store = ResilientStore(RedisStore(f"redis://127.0.0.1:{port}/0", timeout_s=0.2), cooldown_s=5)
    try:
        started = time.monotonic()
        assert await store.get(key("t", "y")) is None
        assert time.monotonic() - started < 1.0
        assert store.degraded
        started = time.monotonic()
        await store.set(key("t", "y"), b"1", 5)  # breaker open: no wait at all
        assert time.monotonic() - started < 0.05
    finally:
        await store.aclose()
        listener.close()
