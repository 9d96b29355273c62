"""The embedded store: one process, in memory, no server needed.

Policy: exact for a single process (``mcp-sonde serve`` refuses more than one worker with it).
Expired keys are dropped when touched and swept when the table grows. The table is bounded
twice: by keys (``max_keys``) and by bytes (``max_bytes``: each entry counts its key, its
value and :data:`ENTRY_OVERHEAD`, what CPython spends on the dict slot, the tuple, the str and
bytes headers and the float). When either bound is reached, expired entries are swept first;
only if that is not enough are live *cache* entries evicted (keys under ``cache_prefixes``:
badges, which a probe can draw again, and signed results kept for lookup), the least recently
written first, until a tenth of the bound is free; a full table costs one linear sweep per
tenth of its size, not per write. State is never evicted: payment locks (a replay would be
served twice), free-pool and limit counters (a client would get its share back), single-flight
locks and host gates. Rate limits bound how much of it there can be; a cache entry that finds
no room is not kept.
"""

from __future__ import annotations

import time

from app.store.base import Store, key

#: Bytes spent per entry beyond its key and value: dict slot, 2-tuple, str and bytes headers,
#: float and the allocator's rounding and headers (set so that RSS stays under the bound: bench/store.py).
ENTRY_OVERHEAD = 280


class MemoryStore(Store):
    """In-process :class:`app.store.base.Store`. Safe on one event loop (no awaits inside operations)."""

    name = "memory"

    def __init__(
        self,
        max_keys: int = 100_000,
        max_bytes: int = 64 * 1024 * 1024,
        cache_prefixes: tuple[str, ...] = (key("badge") + ":", key("attestation") + ":"),
    ) -> None:
        self._values: dict[str, tuple[bytes, float]] = {}
        self._slots: dict[str, dict[str, float]] = {}
        self._max_keys = max_keys
        self._max_bytes = max_bytes
        self._cache_prefixes = cache_prefixes
        self._bytes = 0  # what the entries of _values cost, by the count above

    @property
    def size_bytes(self) -> int:
        """What the stored entries cost (keys, values and per-entry overhead), bytes."""
        return self._bytes

    def _now(self) -> float:
        return time.monotonic()

    def _live(self, key: str) -> bytes | None:
        entry = self._values.get(key)
        if entry is None:
            return None
        if entry[1] <= self._now():
            self._drop(key)
            return None
        return entry[0]

    @staticmethod
    def _cost(key: str, value: bytes) -> int:
        return len(key) + len(value) + ENTRY_OVERHEAD

    def _drop(self, key: str) -> None:
        value, _expires = self._values.pop(key)
        self._bytes -= self._cost(key, value)

    def _write(self, key: str, value: bytes, expires: float) -> None:
        """Store ``value`` in place (the key keeps its place in the write order)."""
        old = self._values.get(key)
        if old is not None:
            self._bytes -= self._cost(key, old[0])
        self._values[key] = (value, expires)
        self._bytes += self._cost(key, value)

    def _put(self, key: str, value: bytes, ttl_s: float) -> None:
        if key in self._values:
            self._drop(key)  # a rewritten key moves to the end: eviction order is write order
        cost = self._cost(key, value)
        cache = key.startswith(self._cache_prefixes)
        if cache and cost > self._max_bytes // 10:
            return  # a tenth of the whole store for one cache entry: not kept (a miss later, not an error)
        if self._full(cost, headroom=False):
            self._sweep(cost)
            if cache and self._full(cost, headroom=False):
                return  # no room left that a cache entry may take
        self._write(key, value, self._now() + ttl_s)

    def _full(self, incoming: int, headroom: bool) -> bool:
        keys, room = self._max_keys, self._max_bytes
        if headroom:  # evict down to nine tenths, so the next writes do not sweep again
            keys, room = keys - max(1, keys // 10), room - room // 10
        return len(self._values) >= keys or self._bytes + incoming > room

    def _sweep(self, incoming: int) -> None:
        """Drop expired entries; if still full, the least recently written until a tenth is free
        (amortised O(1) per write)."""
        now = self._now()
        for stale in [k for k, (_v, expires) in self._values.items() if expires <= now]:
            self._drop(stale)
        if not self._full(incoming, headroom=False):
            return
        for candidate in [k for k in self._values if k.startswith(self._cache_prefixes)]:
            if not self._full(incoming, headroom=True):
                break
            self._drop(candidate)

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
            self._drop(key)
            return True
        return False

    async def renew_if_equal(self, key: str, value: bytes, ttl_s: float) -> bool:
        if self._live(key) == value:
            self._put(key, value, ttl_s)
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
            if k in self._values:
                self._write(k, str(value + 1).encode(), self._values[k][1])
            else:
                self._put(k, str(value + 1).encode(), ttl_s)
        return [value + 1 for value in current]

    async def undraw(self, keys: list[str]) -> None:
        for k in keys:
            value = self._counter(k)
            if value > 0:
                self._write(k, str(value - 1).encode(), self._values[k][1])

    async def counters(self, keys: list[str]) -> list[int]:
        return [self._counter(k) for k in keys]

    async def acquire_slot(self, key: str, token: str, limit: int, ttl_s: float) -> bool:
        now = self._now()
        holders = {t: e for t, e in self._slots.get(key, {}).items() if e > now}
        if token not in holders and len(holders) >= limit:
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
        self._bytes = 0
