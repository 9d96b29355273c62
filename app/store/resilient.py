"""A cache over the shared store that goes on in process while Redis is down.

Policy: only for what may be lost or served a little stale: cached badges and their refresh
locks, signed envelopes kept for ``GET /v1/attestations/{id}``, and the like. While
:class:`~app.store.health.Health` says Redis is down, or when one operation fails, the
operation goes to a bounded in-process store; what it holds is local to this process and is not
copied back: once Redis answers, Redis is the truth again. State worth money or fairness never
goes through here (:mod:`app.store.shared`). ``degraded`` tells ``/readyz``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from app.store.base import Store, StoreError
from app.store.memory import MemoryStore
from app.store.shared import SharedStore

T = TypeVar("T")


class ResilientStore(Store):
    """A :class:`Store` that prefers ``primary`` and falls back to ``fallback`` while it fails."""

    def __init__(self, primary: SharedStore, fallback: MemoryStore | None = None) -> None:
        self.primary = primary
        self.fallback = fallback or MemoryStore()
        self.name = primary.name

    @property
    def degraded(self) -> bool:
        """``True`` while Redis is down (operations use the in-process fallback)."""
        return self.primary.degraded

    async def _call(self, primary: Callable[[], Awaitable[T]], fallback: Callable[[], Awaitable[T]]) -> T:
        if self.primary.degraded:
            return await fallback()
        try:
            return await primary()
        except StoreError:
            return await fallback()

    async def get(self, key: str) -> bytes | None:
        return await self._call(lambda: self.primary.get(key), lambda: self.fallback.get(key))

    async def set(self, key: str, value: bytes, ttl_s: float) -> None:
        await self._call(lambda: self.primary.set(key, value, ttl_s), lambda: self.fallback.set(key, value, ttl_s))

    async def set_nx(self, key: str, value: bytes, ttl_s: float) -> bool:
        return await self._call(
            lambda: self.primary.set_nx(key, value, ttl_s), lambda: self.fallback.set_nx(key, value, ttl_s)
        )

    async def delete_if_equal(self, key: str, value: bytes) -> bool:
        return await self._call(
            lambda: self.primary.delete_if_equal(key, value), lambda: self.fallback.delete_if_equal(key, value)
        )

    async def renew_if_equal(self, key: str, value: bytes, ttl_s: float) -> bool:
        return await self._call(
            lambda: self.primary.renew_if_equal(key, value, ttl_s),
            lambda: self.fallback.renew_if_equal(key, value, ttl_s),
        )

    async def draw(self, keys: list[str], caps: list[int], ttl_s: float) -> list[int] | None:
        return await self._call(
            lambda: self.primary.draw(keys, caps, ttl_s), lambda: self.fallback.draw(keys, caps, ttl_s)
        )

    async def undraw(self, keys: list[str]) -> None:
        await self._call(lambda: self.primary.undraw(keys), lambda: self.fallback.undraw(keys))

    async def counters(self, keys: list[str]) -> list[int]:
        return await self._call(lambda: self.primary.counters(keys), lambda: self.fallback.counters(keys))

    async def acquire_slot(self, key: str, token: str, limit: int, ttl_s: float) -> bool:
        return await self._call(
            lambda: self.primary.acquire_slot(key, token, limit, ttl_s),
            lambda: self.fallback.acquire_slot(key, token, limit, ttl_s),
        )

    async def release_slot(self, key: str, token: str) -> None:
        await self._call(lambda: self.primary.release_slot(key, token), lambda: self.fallback.release_slot(key, token))

    async def ping(self) -> bool:
        return await self.primary.ping()

    async def aclose(self) -> None:
        """Release the fallback's memory (the shared store is closed by its owner)."""
        await self.fallback.aclose()
