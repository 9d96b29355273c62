"""Storage behind one small async interface: Redis (shared) or in process (embedded default).

- :func:`open_store`: state worth money or fairness (:mod:`app.store.shared`: no fallback).
- :func:`open_cache`: what may go on in process while Redis is down (:mod:`app.store.resilient`).
"""

from __future__ import annotations

from app.store.base import Store, StoreError, key
from app.store.health import Health
from app.store.memory import MemoryStore
from app.store.redis import RedisStore
from app.store.resilient import ResilientStore
from app.store.shared import SharedStore

__all__ = [
    "Health",
    "MemoryStore",
    "RedisStore",
    "ResilientStore",
    "SharedStore",
    "Store",
    "StoreError",
    "health_of",
    "key",
    "open_cache",
    "open_store",
]


def open_store(
    redis_url: str | None, timeout_s: float = 2.0, namespace: str = "", memory_max_bytes: int = 64 * 1024 * 1024
) -> Store:
    """A :class:`SharedStore` over Redis when ``redis_url`` is set, else a :class:`MemoryStore`
    of at most ``memory_max_bytes``."""
    if redis_url:
        return SharedStore(RedisStore(redis_url, timeout_s=timeout_s, namespace=namespace))
    return MemoryStore(max_bytes=memory_max_bytes)


def open_cache(store: Store, memory_max_bytes: int = 64 * 1024 * 1024) -> Store:
    """A cache over ``store``: a :class:`ResilientStore` with an in-process fallback of at most
    ``memory_max_bytes`` over a shared store, else ``store`` itself."""
    if isinstance(store, SharedStore):
        return ResilientStore(store, MemoryStore(max_bytes=memory_max_bytes))
    return store


def health_of(store: Store) -> Health | None:
    """The shared store's :class:`Health`, or ``None`` for an in-process store."""
    return store.health if isinstance(store, SharedStore) else None
