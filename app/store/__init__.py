"""Storage behind one small async interface: Redis (shared) or in process (embedded default)."""

from __future__ import annotations

from app.store.base import Store, StoreError, key
from app.store.memory import MemoryStore
from app.store.redis import RedisStore
from app.store.resilient import ResilientStore

__all__ = ["MemoryStore", "RedisStore", "ResilientStore", "Store", "StoreError", "key", "open_store"]


def open_store(redis_url: str | None, timeout_s: float = 0.25, namespace: str = "") -> Store:
    """A :class:`ResilientStore` over Redis when ``redis_url`` is set, else a :class:`MemoryStore`."""
    if redis_url:
        return ResilientStore(RedisStore(redis_url, timeout_s=timeout_s, namespace=namespace))
    return MemoryStore()
