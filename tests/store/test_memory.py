"""The embedded store's bounds: keys and bytes, expired entries swept before live ones are evicted."""

from __future__ import annotations

import tracemalloc

import pytest

from app.checking.freepool import FreePool
from app.store import key
from app.store.memory import ENTRY_OVERHEAD, MemoryStore

pytestmark = pytest.mark.anyio

VALUE = b'{"state":"ok","message":"ok","color":"brightgreen","fresh_until":1790000000.0}'


def _badge_key(n: int, length: int = 2000) -> str:
    """A badge cache key as long as ``length`` (real keys are hashed: this is the worst case)."""
    prefix = key("badge") + f":https://mcp{n}.example.com/"
    return prefix + "p" * (length - len(prefix))


async def test_the_store_never_holds_more_bytes_than_its_bound() -> None:
    store = MemoryStore(max_keys=1_000_000, max_bytes=1024 * 1024)
    for n in range(5_000):
        await store.set(_badge_key(n), VALUE, 172_800)
        assert store.size_bytes <= 1024 * 1024
    assert await store.get(_badge_key(4_999)) == VALUE  # the newest survive
    assert await store.get(_badge_key(0)) is None  # the oldest went first
    assert store.size_bytes == sum(len(k) + len(v) + ENTRY_OVERHEAD for k, (v, _e) in store._values.items())


async def test_a_full_store_sweeps_the_expired_and_keeps_every_live_entry_when_that_is_enough() -> None:
    clock = [0.0]
    store = MemoryStore(max_keys=1_000_000, max_bytes=64 * 1024)
    store._now = lambda: clock[0]  # type: ignore[method-assign]
    await store.set("lock:live", b"1", 100.0)
    for n in range(25):
        await store.set(_badge_key(n), VALUE, 1.0)
    clock[0] = 2.0  # every badge entry expired; the lock has not
    for n in range(25, 40):
        await store.set(_badge_key(n), VALUE, 100.0)
    assert await store.get("lock:live") == b"1"
    assert all([await store.get(_badge_key(n)) == VALUE for n in range(25, 40)])


async def test_a_cache_entry_of_a_tenth_of_the_store_or_more_is_not_kept_and_evicts_nothing() -> None:
    store = MemoryStore(max_bytes=1024 * 1024)
    await store.set(_badge_key(1), VALUE, 60)
    await store.set(_badge_key(2), b"x" * (200 * 1024), 60)
    assert await store.get(_badge_key(2)) is None and await store.get(_badge_key(1)) == VALUE


async def test_counters_and_deletes_keep_the_byte_count_exact() -> None:
    store = MemoryStore(max_bytes=1024 * 1024)
    for _ in range(12):
        assert await store.draw(["pool:a", "pool:b"], [100, 100], 60) is not None
    await store.undraw(["pool:a"])
    assert await store.set_nx("lock:x", b"token", 60)
    assert await store.delete_if_equal("lock:x", b"token")
    expected = sum(len(k) + len(v) + ENTRY_OVERHEAD for k, (v, _e) in store._values.items())
    assert store.size_bytes == expected and await store.counters(["pool:a", "pool:b"]) == [11, 12]
    await store.aclose()
    assert store.size_bytes == 0


def test_the_per_entry_overhead_is_not_an_undercount() -> None:
    """What the store counts per entry is at least what CPython allocates for it (a bound that holds)."""
    import asyncio

    store = MemoryStore(max_keys=1_000_000, max_bytes=10**10)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]

        async def fill() -> None:
            for n in range(5_000):
                await store.set(_badge_key(n), VALUE, 172_800)

        asyncio.run(fill())
        allocated = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert store.size_bytes >= allocated * 0.95, (store.size_bytes, allocated)


async def test_a_badge_flood_never_evicts_payment_locks_pool_counters_or_gates() -> None:
    """Evicting state would serve a replayed payment twice or give a client its free share back;
    only cache entries (badges, which a probe can draw again) make room."""
    store = MemoryStore(max_keys=1_000_000, max_bytes=1024 * 1024)
    pool = FreePool(store, size=1000, per_client=20)
    for _ in range(20):
        assert await pool.draw("203.0.113.7") is not None
    assert await pool.draw("203.0.113.7") is None  # the share is used up
    lock = key("payment", "eip155:8453", "0xasset", "0xpayer", "0xnonce")
    assert await store.set_nx(lock, b"served", 30)
    for n in range(4_000):
        await store.set(_badge_key(n, 500), VALUE, 172_800)
    assert store.size_bytes <= 1024 * 1024
    assert await store.get(lock) == b"served"
    assert await pool.draw("203.0.113.7") is None  # still used up
    assert await store.get(_badge_key(3_999, 500)) == VALUE and await store.get(_badge_key(0, 500)) is None


def test_memory_store_when_full_keeps_recent_writes_and_evicts_old_ones() -> None:
    import asyncio

    from app.store import key
    from app.store.memory import MemoryStore

    async def run() -> None:
        store = MemoryStore(max_keys=100)
        for n in range(100):
            await store.set(key("badge", str(n)), b"old", 172_800)
        await store.set(key("host-start", "a"), b"1", 1.0)  # a short gate written last
        for n in range(100, 130):
            await store.set(key("badge", str(n)), b"new", 172_800)
        assert await store.get(key("host-start", "a")) == b"1"
        assert await store.get(key("badge", "0")) is None
        assert await store.get(key("badge", "129")) == b"new"
        assert len(store._values) <= 100

    asyncio.run(run())
