"""When a probe first contacts a host: the caller's start turns, held up to the moment the host sees them.

Policy (the per-host start rate, :mod:`app.checking.runner`): a host must see no two probes start
closer than the interval. The caller takes the probed host's turn before the probe runs, but
what the host sees is the probe's first connection and its first request, and those may come
later: a busy event loop, a slow connect. So the probe tells the caller's :class:`Pace`:

- before each try to connect to a host until one connection is made, and once more when it is
  made (:meth:`Pace.dialling`, from the pinned backend: an address that does not answer may take
  the whole connect timeout, and TLS comes after), for any host: the probed one or a further one
  (the protected resource metadata a server names). The caller holds the turn from this moment
  or, when it holds none (it lapsed before the probe got here, or was never taken: a further
  host), waits for a new one; none in time raises :class:`PaceRefused` and the host is not
  contacted;
- once its first request to a host is on the wire, and after each try to send one that failed
  before (connect or TLS: the host saw that try), :meth:`Pace.contacted`, from the exchanger's
  trace: the caller holds the turn from then, so a request that left late still leaves the
  interval before the next probe's first one.

Later connections of the same probe to a host it has contacted (a second connection for an
overlapping request, the session's end) are within its turn. A probe without a pace (the
command line's) contacts hosts as it goes.
"""

from __future__ import annotations

from typing import Protocol

from app.errors import SondeError


class PaceRefused(SondeError):
    """No start turn for a host came in time (reason ``target_busy``): the host was not contacted."""


class Pace(Protocol):
    """The caller's say on when a probe's first contact with each host may happen (see the module docs)."""

    async def dialling(self, host: str) -> None:
        """Return when the probe may open its first connection to ``host``.

        Raises:
            PaceRefused: no turn came in time.
        """
        ...

    async def contacted(self, host: str) -> None:
        """The probe's first request to ``host`` is on the wire, or a try to send it failed. Never raises."""
        ...
