"""The Redis store (:mod:`app.store.redis`) against a real Redis: its slot sets."""

from __future__ import annotations

import uuid

import anyio
import pytest

from app.store import RedisStore, key
from tests.servers.redis_server import shared_redis_url

pytestmark = pytest.mark.anyio
NAMESPACE = f"test-slots-{uuid.uuid4().hex[:8]}:"


async def test_a_shorter_slot_does_not_cut_short_a_longer_one_in_redis() -> None:
    """The Redis slot script PEXPIREs a host's whole slot set to the TTL of the *latest* caller, so a
    slot taken with a shorter lifetime (a further host's slot: probe budget + 7 s; a light probe's)
    cuts short every longer slot in the set: the long probe's slot vanishes while it runs and one
    probe too many is let in (host_concurrency exceeded)."""
    store = RedisStore(shared_redis_url(), timeout_s=5.0, namespace=NAMESPACE)
    name = key("slots", uuid.uuid4().hex)
    try:
        assert await store.acquire_slot(name, "long", 2, 30.0)
        assert await store.acquire_slot(name, "short", 2, 0.3)
        await store.release_slot(name, "short")
        await anyio.sleep(0.6)
        assert await store.acquire_slot(name, "third", 2, 30.0)
        assert not await store.acquire_slot(name, "fourth", 2, 30.0), "the long holder's slot was dropped"
    finally:
        await store.client.delete(NAMESPACE + name)
        await store.aclose()
