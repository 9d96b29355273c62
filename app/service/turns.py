"""A host's start turns in the store, and the :class:`~app.probe.pace.Pace` of one probe.

Policy: per target host and class (``paid`` or ``free``), at most one new probe starts per
``host_start_interval_s`` across every process on the store, *as the host sees it*. A turn is
a gate key (``host-start``) held under the probe's token:

- the runner takes the probed host's turn before the probe (:meth:`StartTurns.take`, within
  the check's queue budget; see :mod:`app.service.checks`);
- the probe's :class:`ProbePace` holds it again, from that moment, before the probe's first
  connection to the host and once its first request is on the wire
  (:meth:`StartTurns.hold`, :mod:`app.probe.pace`); a turn that lapsed meanwhile (the probe
  got there late) or a host it never took (a further host: the protected resource metadata a
  server names) is waited for anew, at most :data:`TURN_WAIT_S`, and without one the host is
  not contacted (:class:`~app.probe.pace.PaceRefused`);
- each hold lasts the interval and :data:`START_SLACK_S`, so the next probe's first contact
  comes at least that long after this one's first request left (measured at the server,
  ``bench/sweep.py``).

A token that holds the turn already takes it again: a job's redelivery (the same token) takes
over its dead delivery's turn instead of waiting it out.
"""

from __future__ import annotations

import asyncio
import time
from typing import Final

from app.probe.pace import PaceRefused
from app.store import Store, key

#: The gate is held this much past ``host_start_interval_s``: what separates a request leaving
#: here from its arrival there (a busy receiver, the loopback's scheduling).
START_SLACK_S: Final = 0.1
#: How long a probe waits for a turn it lost or never took, seconds (its deadline bounds it too).
TURN_WAIT_S: Final = 2.0
_POLL_S = 0.05


class StartTurns:
    """The start gates of every host, in ``store``, one per ``interval_s`` (0: no gate)."""

    def __init__(self, store: Store, interval_s: float) -> None:
        self.store = store
        self.interval_s = interval_s

    async def take(self, host: str, klass: str, token: bytes, deadline: float) -> bool:
        """Wait (until ``deadline``, monotonic) for the host's next start in ``klass``. False: none came."""
        if self.interval_s <= 0:
            return True
        gate, ttl = key("host-start", host, klass), self.interval_s + START_SLACK_S
        while not await self.store.set_nx(gate, token, ttl):
            if await self.store.renew_if_equal(gate, token, ttl):
                return True  # (ours already)
            if time.monotonic() > deadline:
                return False
            await asyncio.sleep(_POLL_S)
        return True

    async def hold(self, host: str, klass: str, token: bytes) -> bool:
        """Hold the turn ``token`` has from now for another interval; False when it holds none."""
        if self.interval_s <= 0:
            return True
        return await self.store.renew_if_equal(key("host-start", host, klass), token, self.interval_s + START_SLACK_S)


class ProbePace:
    """The :class:`~app.probe.pace.Pace` of one probe in ``klass`` under ``token`` (see the module docs)."""

    def __init__(self, turns: StartTurns, klass: str, token: bytes) -> None:
        self.turns = turns
        self.klass = klass
        self.token = token

    async def dialling(self, host: str) -> None:
        if await self.turns.hold(host, self.klass, self.token):
            return
        if not await self.turns.take(host, self.klass, self.token, time.monotonic() + TURN_WAIT_S):
            raise PaceRefused("target_busy", "the host's turn for a new contact did not come in time")

    async def sent(self, host: str) -> None:
        await self.turns.hold(host, self.klass, self.token)
