"""Workers pace probes through the shared store only (regression: while Redis answered late on a
loaded machine the service's store fell back to each process's own, and three workers probed one
host 4 at once with starts 33 ms apart)."""

from __future__ import annotations

import uuid

import pytest

from app.queue.shared import SharedOnly, shared_only
from app.store import MemoryStore, RedisStore
from app.store.resilient import ResilientStore
from app.store.shared import SharedStore
from tests.servers.redis_server import shared_redis_url

pytestmark = pytest.mark.anyio


async def test_a_redis_that_does_not_answer_grants_no_slot_gate_or_lock() -> None:
    down = ResilientStore(SharedStore(RedisStore("redis://127.0.0.1:9/0", timeout_s=0.2)))
    assert await down.acquire_slot("host:a", "t1", 2, 10)  # a cache: its own fallback answers
    paced = shared_only(down)
    assert isinstance(paced, SharedOnly)
    assert not await paced.acquire_slot("host:a", "t2", 2, 10)
    assert not await paced.set_nx("gate:a", b"1", 1)
    assert await paced.get("flight:a") is None
    await paced.release_slot("host:a", "t2")  # (a release that fails: the slot expires)
    await paced.set("flight:a", b"x", 1)
    await down.aclose()


async def test_a_redis_that_answers_is_the_one_every_worker_shares() -> None:
    namespace = f"t{uuid.uuid4().hex[:10]}:"
    one = shared_only(SharedStore(RedisStore(shared_redis_url(), namespace=namespace)))
    two = shared_only(ResilientStore(SharedStore(RedisStore(shared_redis_url(), namespace=namespace))))
    assert await one.acquire_slot("host:b", "w1", 1, 10)
    assert not await two.acquire_slot("host:b", "w2", 1, 10)  # (taken in Redis by the other worker)
    await one.release_slot("host:b", "w1")
    assert await two.acquire_slot("host:b", "w2", 1, 10)
    await one.aclose()
    await two.aclose()


def test_a_store_without_fallback_is_used_as_it_is() -> None:
    store = MemoryStore()
    assert shared_only(store) is store
