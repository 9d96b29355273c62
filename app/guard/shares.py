"""Fair shares of the host-lookup threads: per client, and a reserve that only paid checks use.

Policy: ``getaddrinfo`` blocks a thread, and a lookup abandoned at its timeout keeps that
thread until the system resolver really returns, so lookup threads are a scarce resource that
slow name servers can pin. :class:`LookupShares` counts each thread from the moment it starts
until it ends, and refuses a new lookup at once (never queues it) when:

- all :data:`LOOKUP_THREADS` are taken (reason ``resolver_busy``, our capacity);
- the lookup is not for a paid check and the threads outside the paid reserve
  (:data:`PAID_RESERVE`) are taken (``resolver_busy``): free work never leaves a paid check
  without a thread;
- its client already holds :data:`CLIENT_SHARE` threads (``client_lookups_busy``): one client's
  slow-resolving hosts cannot take everyone's threads.

Who a lookup is for is set by the caller around the lookup with :func:`lookups_for`, a context
variable, so the :class:`~app.guard.resolver.Resolver` interface stays one method; a lookup made
outside it (the command line) counts against the total only.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Final

LOOKUP_THREADS: Final = 32
PAID_RESERVE: Final = 8
CLIENT_SHARE: Final = 8


@dataclass(frozen=True, slots=True)
class LookupOwner:
    """Whom a lookup is for: the client's rate key, and whether it is for a paid check."""

    client: str
    paid: bool = False


_owner: ContextVar[LookupOwner | None] = ContextVar("lookup_owner", default=None)


@contextlib.contextmanager
def lookups_for(owner: LookupOwner) -> Iterator[None]:
    """Count the lookups made inside the block against ``owner``'s shares."""
    token = _owner.set(owner)
    try:
        yield
    finally:
        _owner.reset(token)


def current_owner() -> LookupOwner | None:
    """The owner set by the innermost :func:`lookups_for`, if any."""
    return _owner.get()


class LookupShares:
    """Thread-safe counts of lookup threads in use, by class and by client (see the module docs).

    Args:
        total: threads in all.
        paid_reserve: threads that only paid lookups (and lookups without an owner) may take.
        client_share: threads one client may hold at once.
    """

    def __init__(self, total: int = LOOKUP_THREADS, paid_reserve: int = PAID_RESERVE, client_share: int = CLIENT_SHARE):
        self.total = total
        self.free_limit = max(0, total - paid_reserve)
        self.client_share = client_share
        self._lock = threading.Lock()
        self._used = 0
        self._free_used = 0
        self._by_client: dict[str, int] = {}

    def take(self, owner: LookupOwner | None) -> str | None:
        """Take a thread for ``owner``: ``None`` when taken, else the refusal's reason."""
        with self._lock:
            if self._used >= self.total:
                return "resolver_busy"
            if owner is not None:
                if not owner.paid and self._free_used >= self.free_limit:
                    return "resolver_busy"
                if self._by_client.get(owner.client, 0) >= self.client_share:
                    return "client_lookups_busy"
                self._by_client[owner.client] = self._by_client.get(owner.client, 0) + 1
                if not owner.paid:
                    self._free_used += 1
            self._used += 1
            return None

    def give_back(self, owner: LookupOwner | None) -> None:
        """Give back the thread :meth:`take` gave ``owner`` (called from the lookup's thread)."""
        with self._lock:
            self._used -= 1
            if owner is None:
                return
            if not owner.paid:
                self._free_used -= 1
            left = self._by_client.get(owner.client, 0) - 1
            if left > 0:
                self._by_client[owner.client] = left
            else:
                self._by_client.pop(owner.client, None)

    @property
    def in_use(self) -> int:
        """Threads taken now."""
        return self._used
