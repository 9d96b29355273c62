"""A cache over the shared store: in process while Redis is down, Redis the truth again after."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from app.store import RedisStore, ResilientStore, SharedStore, key
from tests.servers.redis_server import OwnRedis
from tests.store.waiting import until

pytestmark = pytest.mark.anyio


async def test_a_cache_goes_on_in_process_while_redis_is_down_and_recovers(tmp_path: Path) -> None:
    redis = OwnRedis(tmp_path)
    redis.start()
    shared = SharedStore(RedisStore(redis.url, timeout_s=0.5))
    cache = ResilientStore(shared)
    try:
        k = key("t", "x")
        await cache.set(k, b"in-redis", 60)
        assert await cache.get(k) == b"in-redis" and not cache.degraded

        redis.stop()
        await cache.set(k, b"in-memory", 60)  # a fault: the fallback takes it, nothing raises
        assert await cache.get(k) in (b"in-memory", None)
        await until(lambda: cache.degraded)
        started = time.monotonic()
        assert await cache.get(k) == b"in-memory"  # down: straight to the fallback
        assert time.monotonic() - started < 0.5  # (no wait for Redis's 0.5 s timeout)

        redis.start()  # a fresh, empty Redis on the same port
        await until(lambda: not cache.degraded)
        assert await cache.get(k) is None  # Redis is the truth again
        await cache.set(k, b"back", 60)
        direct = RedisStore(redis.url)
        assert await direct.get(k) == b"back"
        await direct.aclose()
    finally:
        await cache.aclose()
        await shared.aclose()
        redis.stop()
