"""Redis with an in-process fallback: the service keeps answering while Redis is down.

Policy: a circuit breaker. The first Redis failure opens it for ``cooldown_s`` seconds, during
which every operation goes to the in-process store; after that, the next operation tries
Redis again and closes the breaker when it answers. State kept in the fallback during an
outage (counters, locks, cached results) is local to this process and is not copied back:
after recovery, Redis is the truth again. ``degraded`` tells ``/readyz``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from app.store.base import Store, StoreError
from app.store.memory import MemoryStore

T = TypeVar("T")
logger = logging.getLogger("mcp_sonde.store")


class Breaker:
    """A circuit breaker: open for ``cooldown_s`` seconds after a failure, then half-open (try again).

    Args:
        name: what it guards, for the log.
        cooldown_s: seconds to stay open.
    """

    def __init__(self, name: str, cooldown_s: float = 5.0) -> None:
        self.name = name
        self.cooldown_s = cooldown_s
        self._open_until = 0.0

    @property
    def open(self) -> bool:
        """``True`` while calls should go to the fallback."""
        return time.monotonic() < self._open_until

    def trip(self, error: BaseException) -> None:
        """Open the breaker after ``error``."""
        logger.warning("%s failed (%s); using the in-process fallback", self.name, type(error).__name__)
        self._open_until = time.monotonic() + self.cooldown_s

    def reset(self) -> None:
        """Close the breaker."""
        self._open_until = 0.0

    async def call(
        self,
        primary: Callable[[], Awaitable[T]],
        fallback: Callable[[], Awaitable[T]],
        errors: tuple[type[BaseException], ...],
    ) -> T:
        """Run ``primary`` unless open; on one of ``errors`` trip and run ``fallback``."""
        if self.open:
            return await fallback()
        try:
            return await primary()
        except errors as exc:
            self.trip(exc)
            return await fallback()


class ResilientStore(Store):
    """A :class:`Store` that prefers ``primary`` and falls back to ``fallback`` while it fails."""

    def __init__(self, primary: Store, fallback: MemoryStore | None = None, cooldown_s: float = 5.0) -> None:
        self.primary = primary
        self.fallback = fallback or MemoryStore()
        self.breaker = Breaker(f"store {primary.name}", cooldown_s)
        self.name = primary.name

    @property
    def degraded(self) -> bool:
        """``True`` while the breaker is open (operations use the in-process fallback)."""
        return self.breaker.open

    async def _call(self, primary: Callable[[], Awaitable[T]], fallback: Callable[[], Awaitable[T]]) -> T:
        return await self.breaker.call(primary, fallback, (StoreError,))

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
        ok = await self.primary.ping()
        if ok:
            self.breaker.reset()
        return ok

    async def aclose(self) -> None:
        await self.primary.aclose()
        await self.fallback.aclose()
