"""A host's start turns in the store, and the :class:`~app.net.pace.Pace` of one probe.

Policy: per target host and class (``paid`` or ``free``), at most one new probe starts per
``host_start_interval_s`` across every process on the store, *as the host sees it*. A turn is
a gate key (``host-start``) held under the probe's token:

- the runner takes the probed host's turn before the probe (:meth:`StartTurns.take`, within
  the check's queue budget; see :mod:`app.checking.runner`);
- the probe's :class:`ProbePace` holds it again before the probe's first connection to the
  host (:mod:`app.net.pace`); a turn that lapsed meanwhile (the probe got there late) or a
  host it never took (a further host: the protected resource metadata a server names) is
  waited for anew, at most :data:`TURN_WAIT_S`, and without one the host is not contacted
  (:class:`~app.net.pace.PaceRefused`);
- until the host has seen the probe, a turn is held for the interval plus the time a
  connection may take (``connect_timeout_s``) and :data:`REACH_SLACK_S` (a busy event loop
  between the connect and the first write); from the probe's first request on the wire (or
  its failed try) it is held once more for the interval alone. Both holds add
  :data:`START_SLACK_S`. So the next probe's first contact comes at least the interval after
  this one's first request left, even when that request left late (measured at the server,
  ``bench/sweep.py``); a probe that never dialled its host gives the turn back;
- a further host is held to ``host_concurrency`` too: its first contact takes one of the
  host's probe slots (waited for like its turn), given back when the probe ends.

A token that holds the turn already takes it again: a job's redelivery (the same token) takes
over its dead delivery's turn instead of waiting it out.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Final

from app.net.pace import PaceRefused
from app.store import Store, key

#: The gate is held this much past ``host_start_interval_s``: what separates a request leaving
#: here from its arrival there (a busy receiver, the loopback's scheduling).
START_SLACK_S: Final = 0.1
#: Before the host has seen the probe, the gate is held this much past the connect budget too.
REACH_SLACK_S: Final = 1.0
#: How long a probe waits for a turn it lost or never took, seconds (its deadline bounds it too).
TURN_WAIT_S: Final = 2.0
_POLL_S = 0.05


class StartTurns:
    """The start gates of every host, in ``store``, one per ``interval_s`` (0: no gate);
    ``reach_s``: how much longer a gate is held before the host has seen its probe."""

    def __init__(self, store: Store, interval_s: float, reach_s: float) -> None:
        self.store = store
        self.interval_s = interval_s
        self.before_contact_s = interval_s + START_SLACK_S + reach_s
        self.after_contact_s = interval_s + START_SLACK_S

    async def take(self, host: str, klass: str, token: bytes, deadline: float) -> bool:
        """Wait (until ``deadline``, monotonic) for the host's next start in ``klass``, held until
        contact; False: none came."""
        if self.interval_s <= 0:
            return True
        gate, ttl = _gate(host, klass), self.before_contact_s
        while not await self.store.set_nx(gate, token, ttl):
            if await self.store.renew_if_equal(gate, token, ttl):
                return True  # (ours already)
            if time.monotonic() > deadline:
                return False
            await asyncio.sleep(_POLL_S)
        return True

    async def hold(self, host: str, klass: str, token: bytes, *, contacted: bool) -> bool:
        """Hold the turn ``token`` has from now, until contact or for the interval after it;
        False when it holds none."""
        if self.interval_s <= 0:
            return True
        ttl = self.after_contact_s if contacted else self.before_contact_s
        return await self.store.renew_if_equal(_gate(host, klass), token, ttl)

    async def give_back(self, host: str, klass: str, token: bytes) -> None:
        """Give back a turn ``token`` took and never used (its host saw nothing of it)."""
        if self.interval_s > 0:
            await self.store.delete_if_equal(_gate(host, klass), token)


def _gate(host: str, klass: str) -> str:
    """The store key of a host's start turn in ``klass``."""
    return key("host-start", host, klass)


def slots_key(host: str, klass: str) -> str:
    """The store key of a host's probe slots in ``klass`` (at most ``host_concurrency`` at once)."""
    return key("host-slots", host, klass)


async def wait_slot(store: Store, name: str, token: str, limit: int, until: float, deadline: float) -> bool:
    """Take one of ``limit`` slots ``name`` for ``token``, lasting until ``until`` (monotonic),
    waiting until ``deadline``; False: none came free."""
    while not await store.acquire_slot(name, token, limit, max(until - time.monotonic(), 1.0)):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(_POLL_S)
    return True


@dataclass(frozen=True)
class FurtherSlots:
    """What a further host's slot is: one of ``limit`` (``host_concurrency``), for a probe of ``budget_s``."""

    limit: int
    budget_s: float


class ProbePace:
    """The :class:`~app.net.pace.Pace` of one probe of ``probed`` in ``klass`` under ``token`` (see
    the module docs); a further host's contact also takes one of its ``further`` slots, given back
    by :meth:`settle` with the probed host's turn if it was never dialled."""

    def __init__(self, turns: StartTurns, klass: str, token: str, probed: str, further: FurtherSlots) -> None:
        self.turns = turns
        self.klass = klass
        self.token = token
        self._gate_token = token.encode()
        self.probed = probed
        self.further = further
        self.dialled: set[str] = set()
        self._slotted: list[str] = []

    async def dialling(self, host: str) -> None:
        if host != self.probed and host not in self.dialled:
            await self._further_slot(host)
        if not await self.turns.hold(host, self.klass, self._gate_token, contacted=False):
            deadline = time.monotonic() + TURN_WAIT_S
            if not await self.turns.take(host, self.klass, self._gate_token, deadline):
                raise PaceRefused("target_busy", "the host's turn for a new contact did not come in time")
        self.dialled.add(host)

    async def contacted(self, host: str) -> None:
        await self.turns.hold(host, self.klass, self._gate_token, contacted=True)

    async def settle(self) -> None:
        """The probe is over: its further hosts' slots go back, and the probed host's turn if unused."""
        for host in self._slotted:
            await self.turns.store.release_slot(slots_key(host, self.klass), self.token)
        if self.probed not in self.dialled:
            await self.turns.give_back(self.probed, self.klass, self._gate_token)

    async def _further_slot(self, host: str) -> None:
        start = time.monotonic()
        until, deadline = start + self.further.budget_s + TURN_WAIT_S + 5, start + TURN_WAIT_S
        if not await wait_slot(self.turns.store, slots_key(host, self.klass), self.token, self.further.limit,
                               until, deadline):  # fmt: skip
            raise PaceRefused("target_busy", "the host has no free slot for another contact")
        if host not in self._slotted:
            self._slotted.append(host)
