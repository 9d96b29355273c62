"""The store a worker paces its probes through: the shared one only, never a process's own.

Policy: per-host politeness (at most ``host_concurrency`` probes of a host at once, one new probe
per ``host_start_interval_s``, across all workers) lives in the shared store (Redis). A cache
over it falls back to an in-process store while Redis fails (:mod:`app.store.resilient`): wrong
for a fleet of workers, whose limits would then hold per process only (measured: 4 probes of a
host at once and starts 33 ms apart over 3 workers on a loaded machine), and the shared store
itself raises while Redis is down (:mod:`app.store.shared`). Through this store a lock, gate or
slot that cannot be taken in Redis is simply not taken: the job waits for its turn
and, when it does not come in time, goes back on the queue (:mod:`app.jobs.probe`). A release
that fails leaves the slot to expire. A published result that cannot be read is a miss.
"""

from __future__ import annotations

import logging

from app.store.base import Store, StoreError
from app.store.resilient import ResilientStore
from app.store.shared import SharedStore

logger = logging.getLogger("mcp_sonde.jobs")


def shared_only(store: Store) -> Store:
    """``store`` (or the shared store under a cache) with faults read as "not taken"; an
    in-process store as it is."""
    if isinstance(store, ResilientStore):
        return SharedOnly(store.primary)
    return SharedOnly(store) if isinstance(store, SharedStore) else store


class SharedOnly:
    """``primary``, with faults read as "not taken" (see the module docs)."""

    def __init__(self, primary: Store) -> None:
        self.primary = primary
        self.name = primary.name

    async def get(self, key: str) -> bytes | None:
        try:
            return await self.primary.get(key)
        except StoreError:
            return None

    async def set(self, key: str, value: bytes, ttl_s: float) -> None:
        try:
            await self.primary.set(key, value, ttl_s)
        except StoreError:
            logger.warning("the shared store did not take a write; it is left out")

    async def set_nx(self, key: str, value: bytes, ttl_s: float) -> bool:
        try:
            return await self.primary.set_nx(key, value, ttl_s)
        except StoreError:
            return False

    async def delete_if_equal(self, key: str, value: bytes) -> bool:
        try:
            return await self.primary.delete_if_equal(key, value)
        except StoreError:
            return False

    async def renew_if_equal(self, key: str, value: bytes, ttl_s: float) -> bool:
        try:
            return await self.primary.renew_if_equal(key, value, ttl_s)
        except StoreError:
            return False

    async def draw(self, keys: list[str], caps: list[int], ttl_s: float) -> list[int] | None:
        try:
            return await self.primary.draw(keys, caps, ttl_s)
        except StoreError:
            return None

    async def undraw(self, keys: list[str]) -> None:
        try:
            await self.primary.undraw(keys)
        except StoreError:
            logger.warning("the shared store did not take a give-back; it is left out")

    async def counters(self, keys: list[str]) -> list[int]:
        return await self.primary.counters(keys)

    async def acquire_slot(self, key: str, token: str, limit: int, ttl_s: float) -> bool:
        try:
            return await self.primary.acquire_slot(key, token, limit, ttl_s)
        except StoreError:
            return False

    async def release_slot(self, key: str, token: str) -> None:
        try:
            await self.primary.release_slot(key, token)
        except StoreError:
            logger.warning("the shared store did not take a slot back; it expires")

    async def ping(self) -> bool:
        return await self.primary.ping()

    async def aclose(self) -> None:
        await self.primary.aclose()
