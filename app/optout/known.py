"""The opt-out list as a worker last read it, for the check right before each probe.

Policy: a probe job asks whether its URL is opted out right before it probes
(:mod:`app.jobs.probe`). The list is read afresh when the copy is older than :data:`FRESH_S`
(one read at a time per process, bounded to :data:`READ_S`), so an item added reaches every
worker within seconds. When the database does not answer, the copy last read stands for up to
:data:`STALE_S`: an item added while the database is down cannot be read by anyone, and the
sweep already never hands out a listed endpoint; probes of endpoints not listed then go on, their
runs waiting for the database (:mod:`app.jobs.runs`). A worker that has never read the list, or
whose copy is older than that, knows nothing (:class:`ListUnknown`): the caller decides
(:mod:`app.jobs.probe` leaves the word to the job's source, which read the list when it handed
the job out, within the same lifetime).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import anyio

from app.optout.store import OptOut, OptOutList, matches

#: A copy younger than this is used as it is, seconds.
FRESH_S = 5.0
#: Longest a copy stands in for a database that does not answer, seconds.
STALE_S = 900.0
#: Longest one read of the list may take, seconds.
READ_S = 3.0


class ListUnknown(Exception):
    """The list could not be read and no copy recent enough is held."""


class KnownOptOuts:
    """The list as last read (see the module docs)."""

    def __init__(self, listed: OptOutList, clock: Callable[[], float] = time.monotonic) -> None:
        self.listed = listed
        self.clock = clock
        self._items: list[OptOut] | None = None
        self._read_at = 0.0
        self._reading = anyio.Lock()

    async def covers(self, url: str) -> bool:
        """Whether ``url`` is opted out.

        Raises:
            ListUnknown: the list cannot be read now and no copy of the last :data:`STALE_S` is held.
        """
        if self._items is None or self.clock() - self._read_at > FRESH_S:
            async with self._reading:
                if self._items is None or self.clock() - self._read_at > FRESH_S:  # (not read meanwhile)
                    await self._read()
        assert self._items is not None
        return matches(url, self._items)

    async def warm(self) -> None:
        """Read the list now if it can be (at a worker's start: a copy for when the database goes away)."""
        try:
            await self.covers("https://opt-out.invalid/")
        except ListUnknown:
            return

    async def _read(self) -> None:
        asked = self.clock()
        try:
            with anyio.fail_after(READ_S):
                self._items = await self.listed.items()
            self._read_at = asked
        except Exception as exc:  # any fault of the database: the copy stands, while it may
            if self._items is None or asked - self._read_at > STALE_S:
                raise ListUnknown(f"the opt-out list cannot be read ({type(exc).__name__})") from exc
