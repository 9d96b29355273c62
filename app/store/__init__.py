"""Storage behind one small async interface: Redis (shared) or in process (embedded default)."""

from __future__ import annotations

from app.store.base import Store, StoreError, key
from app.store.memory import MemoryStore
from app.store.redis import RedisStore
from app.store.resilient import ResilientStore

__all__ = ["MemoryStore", "RedisStore", "ResilientStore", "Store", "StoreError", "key", "open_store"]


def open_store(
    redis_url: str | None, timeout_s: float = 0.25, namespace: str = "", memory_max_bytes: int = 64 * 1024 * 1024
) -> Store:
    """A :class:`ResilientStore` over Redis when ``redis_url`` is set, else a :class:`MemoryStore`
    of at most ``memory_max_bytes`` (the fallback during a Redis outage has the same bound)."""
    if redis_url:
        fallback = MemoryStore(max_bytes=memory_max_bytes)
        return ResilientStore(RedisStore(redis_url, timeout_s=timeout_s, namespace=namespace), fallback=fallback)
    return MemoryStore(max_bytes=memory_max_bytes)
