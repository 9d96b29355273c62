"""The same contract for every store: the in-process one and Redis (a real server)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import anyio
import pytest

from app.store import MemoryStore, RedisStore, ResilientStore, SharedStore, Store, key
from tests.servers.redis_server import shared_redis_url

pytestmark = pytest.mark.anyio


#: The contract is about semantics, not speed: 50 concurrent draws open 50 connections, and on a
#: loaded machine a connect took longer than 0.25 s (outages are tested in tests/store/test_shared.py).
CONTRACT_TIMEOUT_S = 5.0


@pytest.fixture(params=["memory", "redis", "shared-redis", "cache-redis"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[Store]:
    if request.param == "memory":
        backend: Store = MemoryStore()
    elif request.param == "redis":
        backend = RedisStore(shared_redis_url(), timeout_s=CONTRACT_TIMEOUT_S)
    elif request.param == "shared-redis":
        backend = SharedStore(RedisStore(shared_redis_url(), timeout_s=CONTRACT_TIMEOUT_S))
    else:
        shared = SharedStore(RedisStore(shared_redis_url(), timeout_s=CONTRACT_TIMEOUT_S))
        backend = ResilientStore(shared)
    try:
        yield backend
    finally:
        await backend.aclose()
        if isinstance(backend, ResilientStore):
            await backend.primary.aclose()


def fresh(kind: str) -> str:
    return key(kind, uuid.uuid4().hex)


async def test_set_get_and_expiry(store: Store) -> None:
    k = fresh("value")
    assert await store.get(k) is None
    await store.set(k, b"v1", 0.3)
    assert await store.get(k) == b"v1"
    await anyio.sleep(0.45)
    assert await store.get(k) is None


async def test_set_nx_is_a_lock(store: Store) -> None:
    k = fresh("lock")
    assert await store.set_nx(k, b"a", 5)
    assert not await store.set_nx(k, b"b", 5)
    assert not await store.delete_if_equal(k, b"b")  # not our token
    assert await store.get(k) == b"a"
    assert await store.delete_if_equal(k, b"a")
    assert await store.set_nx(k, b"b", 5)


async def test_renew_if_equal_keeps_only_ones_own_key(store: Store) -> None:
    k = fresh("gate")
    assert not await store.renew_if_equal(k, b"a", 5)  # absent: nothing to keep, nothing written
    assert await store.get(k) is None
    assert await store.set_nx(k, b"a", 0.3)
    assert not await store.renew_if_equal(k, b"b", 5)  # not our token: its lifetime is untouched
    assert await store.renew_if_equal(k, b"a", 1.0)
    await anyio.sleep(0.45)
    assert await store.get(k) == b"a"  # the renewed lifetime, not the first one, holds
    await anyio.sleep(0.7)
    assert await store.get(k) is None
    assert not await store.renew_if_equal(k, b"a", 5)  # lapsed: not taken again by a renewal


async def test_draw_is_all_or_nothing(store: Store) -> None:
    pool, share = fresh("pool"), fresh("share")
    assert await store.draw([pool, share], [3, 2], 60) == [1, 1]
    assert await store.draw([pool, share], [3, 2], 60) == [2, 2]
    assert await store.draw([pool, share], [3, 2], 60) is None  # share exhausted: pool untouched
    assert await store.counters([pool, share]) == [2, 2]
    other = fresh("share")
    assert await store.draw([pool, other], [3, 2], 60) == [3, 1]
    assert await store.draw([pool, other], [3, 2], 60) is None  # pool exhausted
    await store.undraw([pool, other])
    assert await store.counters([pool, other]) == [2, 0]
    await store.undraw([other])
    assert await store.counters([other]) == [0]  # never below zero


async def test_draw_counters_expire(store: Store) -> None:
    k = fresh("pool")
    assert await store.draw([k], [5], 0.3) == [1]
    await anyio.sleep(0.45)
    assert await store.counters([k]) == [0]


async def test_slots(store: Store) -> None:
    k = fresh("slots")
    assert await store.acquire_slot(k, "t1", 2, 5)
    assert await store.acquire_slot(k, "t2", 2, 5)
    assert not await store.acquire_slot(k, "t3", 2, 5)
    await store.release_slot(k, "t1")
    assert await store.acquire_slot(k, "t3", 2, 5)


async def test_slots_expire(store: Store) -> None:
    k = fresh("slots")
    assert await store.acquire_slot(k, "t1", 1, 0.3)
    assert not await store.acquire_slot(k, "t2", 1, 0.3)
    await anyio.sleep(0.45)
    assert await store.acquire_slot(k, "t2", 1, 0.3)


async def test_concurrent_draws_never_exceed_the_cap(store: Store) -> None:
    k = fresh("pool")
    results: list[list[int] | None] = []

    async def one() -> None:
        results.append(await store.draw([k], [10], 60))

    async with anyio.create_task_group() as group:
        for _ in range(50):
            group.start_soon(one)
    assert sum(r is not None for r in results) == 10
    assert await store.counters([k]) == [10]


async def test_ping(store: Store) -> None:
    assert await store.ping()


def test_keys_hide_their_parts() -> None:
    k = key("result", "https://mcp.example.com/mcp?token=secret")
    assert "secret" not in k and k.startswith("mcp-sonde:v1:result:")


async def test_redis_namespace_prefixes_every_key() -> None:
    import redis.asyncio as aioredis

    url = shared_redis_url()
    namespace = f"ns-{uuid.uuid4().hex[:8]}:"
    store = RedisStore(url, namespace=namespace)
    raw = aioredis.Redis.from_url(url)
    try:
        k = fresh("value")
        await store.set(k, b"v", 5)
        assert await raw.get(namespace + k) == b"v"
        assert await raw.get(k) is None
        assert await store.draw([fresh("pool")], [1], 5) == [1]
        assert await store.acquire_slot(fresh("slots"), "t", 1, 5)
        keys = [key.decode() if isinstance(key, bytes) else key for key in await raw.keys(namespace + "*")]
        assert len(keys) == 3 and all(key.startswith(namespace) for key in keys)
    finally:
        await store.aclose()
        await raw.aclose()
