"""A small thread-safe least-recently-used memo, for results that are pure functions of a key.

Servers list the same tools check after check, so the suite remembers what it derived from
them (hygiene findings per tool, fingerprints per list). Suites run on worker threads: every
access holds one lock. ``maxsize`` 0 remembers nothing.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Memo(Generic[K, V]):
    """At most ``maxsize`` entries; the least recently used goes first."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The value remembered for ``key`` (now the most recently used), or ``None``."""
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        """Remember ``value`` for ``key``, dropping the least recently used past ``maxsize``."""
        with self._lock:
            self._entries[key] = value
            while len(self._entries) > self.maxsize:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        """Forget everything."""
        with self._lock:
            self._entries.clear()
