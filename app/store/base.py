"""The store interface: the few atomic operations the service needs, on Redis or in process.

Policy: every operation is atomic on its own (Redis: one command or one Lua script), keys
expire, and values are bytes. Nothing here knows about checks, badges or payments; callers
build their keys (always prefixed, see :func:`key`).
"""

from __future__ import annotations

import hashlib
from typing import Protocol

from app.errors import SondeError

PREFIX = "mcp-sonde:v1:"


def key(kind: str, *parts: str) -> str:
    """A namespaced key; free-form parts (URLs, IPs) are hashed so keys stay short and hide secrets."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32] if parts else ""
    return f"{PREFIX}{kind}:{digest}" if digest else f"{PREFIX}{kind}"


class StoreError(SondeError):
    """The backing store failed (unreachable, timed out, or down by :class:`app.store.health.Health`).

    A cache falls back (:mod:`app.store.resilient`); state worth money or fairness is refused:
    the HTTP layer answers 503 ``shared_state_unavailable`` and nothing is charged. The message
    names the fault's kind only (a driver's text may hold the Redis URL).
    """

    def __init__(self, message: str = "the shared store does not answer") -> None:
        super().__init__("shared_state_unavailable", message)


class Store(Protocol):
    """Atomic key operations with expiry. Times are seconds."""

    name: str

    async def get(self, key: str) -> bytes | None:
        """The value, or ``None`` when absent or expired."""
        ...

    async def set(self, key: str, value: bytes, ttl_s: float) -> None:
        """Store ``value`` for ``ttl_s`` seconds."""
        ...

    async def set_nx(self, key: str, value: bytes, ttl_s: float) -> bool:
        """Store ``value`` only if ``key`` is absent; ``True`` when stored (a lock taken)."""
        ...

    async def delete_if_equal(self, key: str, value: bytes) -> bool:
        """Delete ``key`` only if it holds ``value`` (releasing one's own lock)."""
        ...

    async def renew_if_equal(self, key: str, value: bytes, ttl_s: float) -> bool:
        """Give ``key`` a new lifetime of ``ttl_s`` seconds only if it holds ``value`` (keeping one's own lock)."""
        ...

    async def draw(self, keys: list[str], caps: list[int], ttl_s: float) -> list[int] | None:
        """Increment every counter in ``keys`` by one, only if each is below its cap; all or nothing.

        Returns the new values, or ``None`` when any counter was at its cap (nothing changed).
        """
        ...

    async def undraw(self, keys: list[str]) -> None:
        """Decrement every counter in ``keys`` by one (never below zero): give a draw back."""
        ...

    async def counters(self, keys: list[str]) -> list[int]:
        """Current values of counters (0 when absent)."""
        ...

    async def acquire_slot(self, key: str, token: str, limit: int, ttl_s: float) -> bool:
        """Take one of ``limit`` slots named ``key`` for ``token``; slots expire after ``ttl_s``.

        A ``token`` that holds one of them already takes it again (its lifetime starts anew): a
        job's redelivery takes over the slot its dead delivery left (:mod:`app.checking.runner`).
        """
        ...

    async def release_slot(self, key: str, token: str) -> None:
        """Give the slot held by ``token`` back."""
        ...

    async def ping(self) -> bool:
        """``True`` when the store answers."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...
