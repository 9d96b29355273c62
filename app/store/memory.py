"""The embedded store: one process, in memory, no server needed.

Policy: exact for a single process (``mcp-sonde serve`` refuses more than one worker with it).
Expired keys are dropped when touched and swept when the table grows; the table is bounded
(``max_keys``): when full, expired entries are swept and then the least recently written
tenth is evicted, so short-lived gates and locks (rewritten often) outlive day-old badge
entries, and a full table costs one linear sweep per tenth of its size, not per write.
"""

from __future__ import annotations

import itertools
import time

from app.store.base import Store


class MemoryStore(Store):
    """In-process :class:`app.store.base.Store`. Safe on one event loop (no awaits inside operations)."""

    name = "memory"

    def __init__(self, max_keys: int = 100_000) -> None:
        self._values: dict[str, tuple[bytes, float]] = {}
        self._slots: dict[str, dict[str, float]] = {}
        self._max_keys = max_keys

    def _now(self) -> float:
        return time.monotonic()

    def _live(self, key: str) -> bytes | None:
        entry = self._values.get(key)
        if entry is None:
            return None
        if entry[1] <= self._now():
            del self._values[key]
            return None
        return entry[0]

    def _put(self, key: str, value: bytes, ttl_s: float) -> None:
        self._values.pop(key, None)  # a rewritten key moves to the end: eviction order is write order
        if len(self._values) >= self._max_keys:
            self._sweep()
        self._values[key] = (value, self._now() + ttl_s)

    def _sweep(self) -> None:
        """Drop expired entries; if still full, the least recently written tenth (amortised O(1) per write)."""
        now = self._now()
        for stale in [k for k, (_v, expires) in self._values.items() if expires <= now]:
            del self._values[stale]
        if len(self._values) >= self._max_keys:
            excess = len(self._values) - self._max_keys + max(1, self._max_keys // 10)
            for evicted in list(itertools.islice(self._values, excess)):
                del self._values[evicted]

    async def get(self, key: str) -> bytes | None:
        return self._live(key)

    async def set(self, key: str, value: bytes, ttl_s: float) -> None:
        self._put(key, value, ttl_s)

    async def set_nx(self, key: str, value: bytes, ttl_s: float) -> bool:
        if self._live(key) is not None:
            return False
        self._put(key, value, ttl_s)
        return True

    async def delete_if_equal(self, key: str, value: bytes) -> bool:
        if self._live(key) == value:
            del self._values[key]
            return True
        return False

    def _counter(self, key: str) -> int:
        value = self._live(key)
        return int(value) if value is not None else 0

    async def draw(self, keys: list[str], caps: list[int], ttl_s: float) -> list[int] | None:
        current = [self._counter(k) for k in keys]
        if any(value >= cap for value, cap in zip(current, caps, strict=True)):
            return None
        for k, value in zip(keys, current, strict=True):
            expires = self._values[k][1] if k in self._values else self._now() + ttl_s
            self._values[k] = (str(value + 1).encode(), expires)
        return [value + 1 for value in current]

    async def undraw(self, keys: list[str]) -> None:
        for k in keys:
            value = self._counter(k)
            if value > 0:
                self._values[k] = (str(value - 1).encode(), self._values[k][1])

    async def counters(self, keys: list[str]) -> list[int]:
        return [self._counter(k) for k in keys]

    async def acquire_slot(self, key: str, token: str, limit: int, ttl_s: float) -> bool:
        now = self._now()
        holders = {t: e for t, e in self._slots.get(key, {}).items() if e > now}
        if len(holders) >= limit:
            self._slots[key] = holders
            return False
        holders[token] = now + ttl_s
        self._slots[key] = holders
        return True

    async def release_slot(self, key: str, token: str) -> None:
        holders = self._slots.get(key)
        if holders is not None:
            holders.pop(token, None)
            if not holders:
                del self._slots[key]

    async def ping(self) -> bool:
        return True

    async def aclose(self) -> None:
        self._values.clear()
        self._slots.clear()
