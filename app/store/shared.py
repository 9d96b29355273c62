"""The shared store (Redis) for state worth money or fairness: it is never counted from zero.

Policy: the free pool and its per-client shares, payment locks and payment-identifier records,
single-flight locks and host slots live in Redis when Redis is configured, because a count
that each instance started afresh would hand out the whole pool once per instance. So this
store has no in-process fallback: an operation Redis does not take raises
:class:`~app.store.base.StoreError`, and the caller refuses what needed it (the HTTP layer
answers 503 ``shared_state_unavailable``; nothing is charged). Cached reads go on through
:class:`app.store.resilient.ResilientStore`.

- A failure is reported to :class:`~app.store.health.Health`, which decides with hysteresis
  whether Redis is down; while it is, operations fail at once instead of waiting for a timeout.
- An operation that failed within :data:`RETRY_IF_FASTER_S` (a pooled connection that a
  restarted Redis reset) is tried once more on a fresh connection. A second draw after a lost
  reply would count one check too many against the pool: never one too few.
- A release that fails (a lock's ``delete_if_equal``, a slot's ``release_slot``, a draw's
  ``undraw``) is kept and replayed when Redis answers again, up to :data:`PENDING_MAX`; a lock
  or slot not released expires by its own lifetime anyway.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TypeVar

from app.store.base import Store, StoreError
from app.store.health import Health
from app.store.redis import RedisStore

T = TypeVar("T")
logger = logging.getLogger("mcp_sonde.store")

#: A failure quicker than this many seconds is tried once more (a reset pooled connection).
RETRY_IF_FASTER_S = 0.25
#: Failed releases kept for replay at most.
PENDING_MAX = 10_000


class SharedStore(Store):
    """:class:`RedisStore` with outage detection and release replay (see the module docs).

    Args:
        primary: the Redis store.
    """

    def __init__(self, primary: RedisStore) -> None:
        self.primary = primary
        self.name = primary.name
        self.health = Health(primary.ping, primary.heartbeat, name=f"store {primary.name}")
        self.health.on_up(self._replay)
        self._pending: deque[Callable[[], Awaitable[object]]] = deque(maxlen=PENDING_MAX)

    @property
    def degraded(self) -> bool:
        """``True`` while Redis is down (shared state is refused)."""
        return not self.health.up

    async def _call(self, op: Callable[[], Awaitable[T]]) -> T:
        if not self.health.up:
            raise StoreError("the shared store is down")
        started = time.monotonic()
        try:
            return await op()
        except StoreError:
            if time.monotonic() - started < RETRY_IF_FASTER_S:
                try:
                    return await op()
                except StoreError:
                    pass
            self.health.failed()
            raise

    async def _release(self, op: Callable[[], Awaitable[object]]) -> None:
        try:
            await self._call(op)
        except StoreError:
            self._pending.append(op)

    async def _replay(self) -> None:
        replayed = 0
        while self._pending:
            op = self._pending.popleft()
            try:
                await op()
            except StoreError:
                self._pending.appendleft(op)
                self.health.failed()
                return
            replayed += 1
        if replayed:
            logger.info("replayed %d releases the shared store missed", replayed)

    async def get(self, key: str) -> bytes | None:
        return await self._call(lambda: self.primary.get(key))

    async def set(self, key: str, value: bytes, ttl_s: float) -> None:
        await self._call(lambda: self.primary.set(key, value, ttl_s))

    async def set_nx(self, key: str, value: bytes, ttl_s: float) -> bool:
        return await self._call(lambda: self.primary.set_nx(key, value, ttl_s))

    async def delete_if_equal(self, key: str, value: bytes) -> bool:
        """As the interface; a release Redis does not take is replayed later and answers ``False``."""
        try:
            return await self._call(lambda: self.primary.delete_if_equal(key, value))
        except StoreError:
            self._pending.append(lambda: self.primary.delete_if_equal(key, value))
            return False

    async def renew_if_equal(self, key: str, value: bytes, ttl_s: float) -> bool:
        return await self._call(lambda: self.primary.renew_if_equal(key, value, ttl_s))

    async def draw(self, keys: list[str], caps: list[int], ttl_s: float) -> list[int] | None:
        return await self._call(lambda: self.primary.draw(keys, caps, ttl_s))

    async def undraw(self, keys: list[str]) -> None:
        await self._release(lambda: self.primary.undraw(keys))

    async def counters(self, keys: list[str]) -> list[int]:
        return await self._call(lambda: self.primary.counters(keys))

    async def acquire_slot(self, key: str, token: str, limit: int, ttl_s: float) -> bool:
        return await self._call(lambda: self.primary.acquire_slot(key, token, limit, ttl_s))

    async def release_slot(self, key: str, token: str) -> None:
        await self._release(lambda: self.primary.release_slot(key, token))

    async def ping(self) -> bool:
        return await self.primary.ping()

    def start(self) -> None:
        """Start the heartbeat (inside the event loop)."""
        self.health.start()

    async def aclose(self) -> None:
        await self.health.aclose()
        await self.primary.aclose()
