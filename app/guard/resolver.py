"""Host name resolution behind a small interface.

Policy: the probe resolves a host exactly once, asks for every A and AAAA record, bounds the
lookup in time, and then connects only to the addresses it got (see
:mod:`app.net.transport`). A lookup that finds nothing, answers NXDOMAIN or times out is a
normal probe result with status ``dns``, reported through :class:`ResolutionFailed`.

:class:`SystemResolver` uses the operating system's resolver (``getaddrinfo``, which honours
``/etc/hosts`` and the configured name servers). Tests swap in another :class:`Resolver`.
"""

from __future__ import annotations

import socket
import threading
from typing import Any, Protocol

import anyio
import anyio.to_thread

from app.errors import SondeError
from app.guard.addresses import IPAddress
from app.guard.policy import addresses_of
from app.guard.shares import LOOKUP_THREADS, LookupShares, current_owner


class ResolutionFailed(SondeError):
    """The host name could not be resolved.

    Reasons: ``dns_nxdomain`` (the name does not exist), ``dns_no_records`` (no A or AAAA
    records), ``dns_timeout`` (no answer in time), ``dns_failure`` (the resolver failed).
    """


class Resolver(Protocol):
    """Resolve a host name to all of its addresses."""

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        """Return every A and AAAA address of ``host``, in resolver order, without duplicates.

        Raises:
            ResolutionFailed: when there is no usable answer.
        """
        ...


_NXDOMAIN_CODES = {socket.EAI_NONAME, getattr(socket, "EAI_NODATA", socket.EAI_NONAME)}


class ResolverBusy(SondeError):
    """No lookup thread may be taken now: every one is busy (reason ``resolver_busy``, our own
    capacity, not the target's fault), or the client already holds its share
    (``client_lookups_busy``); see :mod:`app.guard.shares`."""


#: At most :data:`LOOKUP_THREADS` getaddrinfo threads run at once, counted from the moment a
#: thread starts until it really ends (a lookup abandoned at its timeout keeps its slot while the
#: system resolver still holds the thread), in fair shares (:mod:`app.guard.shares`).
_shares = LookupShares()
_thread_limiter = anyio.CapacityLimiter(LOOKUP_THREADS)


class _LookupState:
    """Whether a lookup's thread started: exactly one of the thread and its caller gives the share back."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state = "pending"

    def start(self) -> bool:
        """In the thread: ``False`` when the caller gave up before it started (do nothing then)."""
        with self._lock:
            if self._state == "abandoned":
                return False
            self._state = "running"
            return True

    def abandon(self) -> bool:
        """In the caller: ``True`` when the thread never started (the caller gives the share back)."""
        with self._lock:
            if self._state != "pending":
                return False
            self._state = "abandoned"
            return True


class SystemResolver:
    """:class:`Resolver` over ``getaddrinfo`` in worker threads, bounded by ``timeout_s`` seconds.

    Raises :class:`ResolverBusy` at once when no lookup thread may be taken for the lookup's
    owner (:func:`app.guard.shares.lookups_for`).
    """

    def __init__(self, timeout_s: float = 3.0) -> None:
        self.timeout_s = timeout_s

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        """See :meth:`Resolver.resolve`.

        Raises:
            ResolutionFailed: no usable answer.
            ResolverBusy: no lookup thread may be taken.
        """
        owner = current_owner()
        shares = _shares
        refused = shares.take(owner)
        if refused == "client_lookups_busy":
            raise ResolverBusy(refused, "this client already has its share of host lookups running; try again shortly")
        if refused is not None:
            raise ResolverBusy(refused, "too many host lookups are running; try again shortly")
        # The thread gives the share back when it ends; a lookup cancelled before its thread
        # starts gives it back here, and the thread, if it starts later, does nothing.
        state = _LookupState()

        def lookup() -> list[tuple[Any, ...]]:
            if not state.start():
                return []
            try:
                return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            finally:
                shares.give_back(owner)

        try:
            try:
                with anyio.fail_after(self.timeout_s):
                    infos = await anyio.to_thread.run_sync(lookup, abandon_on_cancel=True, limiter=_thread_limiter)
            finally:
                if state.abandon():  # timed out or cancelled before the thread started
                    shares.give_back(owner)
        except TimeoutError as exc:
            raise ResolutionFailed("dns_timeout", f"no answer within {self.timeout_s} s") from exc
        except socket.gaierror as exc:
            if exc.errno in _NXDOMAIN_CODES:
                raise ResolutionFailed("dns_nxdomain", "the host name does not exist") from exc
            if exc.errno == socket.EAI_AGAIN:
                raise ResolutionFailed("dns_timeout", "the resolver did not answer") from exc
            raise ResolutionFailed("dns_failure", "the resolver failed") from exc
        except OSError as exc:
            raise ResolutionFailed("dns_failure", "the resolver failed") from exc
        addresses = addresses_of(infos)
        if not addresses:
            raise ResolutionFailed("dns_no_records", "the host name has no A or AAAA records")
        return addresses
