"""Running live checks for the service: single-flight per URL, and a polite pace per host.

Policy:
- A credentialed check (the caller's own headers) never shares a probe and is never
  published: it runs on its own, paced like any other, and its result goes to its caller only.
- Concurrent checks of one normalised URL (and mode) share one live probe: in this process
  through one task that every request awaits (a request that goes away does not cancel the
  probe the others wait for); across instances through a store lock, whose holder publishes
  the result under the lock's token for the waiters.
- Per target host, at most ``host_concurrency`` probes run at once across all instances, and
  at most one new probe starts per ``host_start_interval_s`` as the host sees it: the turn is
  taken before the probe and held again at its first connection and its first request, to
  every host it contacts (:mod:`app.checking.turns`). A check that cannot start within
  ``queue_budget_s`` raises :class:`TargetBusy` (the API answers 429 with ``Retry-After``), as
  does one whose turn lapsed before its first contact and did not come back in time.
- Paid checks never wait behind free work (free-pool checks, badge probes and refreshes): the
  two classes have their own turns (slots and start pace) per host, and share a probe only
  within their class. So a host sees at most ``host_concurrency`` free and
  ``host_concurrency`` paid probes at once.
- Within a class, one client holds at most ``host_client_concurrency`` of a host's turns at
  once: a client's own checks queue behind each other, not in front of everyone else's.
- A job's check (:mod:`app.jobs.probe`) holds the single-flight lock under a token named by its
  job id (``flight_token``), not a random one: a job is redelivered only after the worker that
  had it stopped answering (:mod:`app.queue.broker`), so a redelivery that finds the lock held
  under its own token takes it over instead of waiting for the dead delivery's lock to expire;
  the host's slots are taken under the same token, so the redelivery takes over the dead
  delivery's slots too (the host's count stays right: the dead probe runs no more).
"""

from __future__ import annotations

import asyncio
import math
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from app.checking.metrics import Metrics
from app.checking.turns import REACH_SLACK_S, FurtherSlots, ProbePace, StartTurns, slots_key, wait_slot
from app.errors import SondeError
from app.guard import ResolvedTarget
from app.guard.shares import LookupOwner, lookups_for
from app.net.pace import Pace, PaceRefused
from app.probe import ProbeResult
from app.probe.credentials import Credentials
from app.probe.reach import ContactPolicy
from app.settings import Settings
from app.store import Store, key
from app.suite.model import CheckResult


@dataclass(frozen=True)
class CheckMode:
    """What kind of check: light (handshake only), full, full with tool definitions; with credentials or not;
    the caller's say on further URLs the probe contacts (``contact``, :mod:`app.probe.reach`); and the
    probe's start turns (``pace``, set by the runner for each probe: :mod:`app.checking.turns`)."""

    light: bool = False
    include_tools: bool = False
    credentials: Credentials | None = None
    contact: ContactPolicy | None = None
    pace: Pace | None = None

    @property
    def flight(self) -> str:
        """The single-flight name of this mode (credentialed checks have none: they never share)."""
        return "light" if self.light else ("full+tools" if self.include_tools else "full")


@dataclass(frozen=True, slots=True)
class Turn:
    """Whose turn a probe takes: the client's rate key and its class (paid or free)."""

    client: str
    paid: bool

    @property
    def klass(self) -> str:
        """``paid`` or ``free``."""
        return "paid" if self.paid else "free"


ProbeFn = Callable[[ResolvedTarget, CheckMode], Awaitable[ProbeResult]]
_POLL_S = 0.05


class TargetBusy(SondeError):
    """The target host has no free probe slot within the budget. ``retry_after`` is in seconds."""

    def __init__(self, retry_after: int) -> None:
        super().__init__("target_busy", "the target host's turn for a new probe did not come in time")
        self.retry_after = retry_after


class CheckRunner:
    """Runs checks; see the module docs for the policy.

    Args:
        store: locks, slots and published results.
        settings: limits and budgets.
        probe: the probe to run for a resolved target in a :class:`CheckMode`.
        metrics: where joins, probes and waits for a host's turn are counted.
    """

    def __init__(self, store: Store, settings: Settings, probe: ProbeFn, metrics: Metrics) -> None:
        self.store = store
        self.settings = settings
        self.probe = probe
        self.metrics = metrics
        self.turns = StartTurns(store, settings.host_start_interval_s, settings.connect_timeout_s + REACH_SLACK_S)
        self._running: dict[str, asyncio.Task[ProbeResult]] = {}

    async def check(
        self,
        target: ResolvedTarget,
        mode: CheckMode | None = None,
        *,
        client: str = "",
        paid: bool = False,
        flight_token: str | None = None,
    ) -> ProbeResult:
        """A live result for ``target``, shared with concurrent checks of the same URL and class.

        A full check's result is a :class:`~app.suite.model.CheckResult`; a credentialed one
        is never shared (see the module docs). ``client`` is the asker's rate key (its share of
        the host's turns), ``paid`` its class. ``flight_token``: the single-flight lock's token
        for a job's check (its job id; see the module docs), a random one else.

        Raises:
            TargetBusy: the host's turn did not come within the budget.
            ProbeFailed: the probe failed through our own fault.
        """
        mode = mode or CheckMode()
        turn = Turn(client, paid)
        if mode.credentials is not None:
            return await self._paced(target, mode, turn, time.monotonic() + self.settings.queue_budget_s, flight_token)
        flight = key("flight", mode.flight, turn.klass, target.url.url)
        task = self._running.get(flight)
        if task is not None:
            self.metrics.joins.inc()
        else:
            task = asyncio.create_task(self._lead(flight, target, mode, turn, flight_token))
            self._running[flight] = task
            task.add_done_callback(lambda _t: self._running.pop(flight, None))
        return await asyncio.shield(task)

    async def _lead(
        self, flight: str, target: ResolvedTarget, mode: CheckMode, turn: Turn, flight_token: str | None = None
    ) -> ProbeResult:
        budget = self.settings.light_probe_timeout_s if mode.light else self.settings.probe_timeout_s
        lock_ttl = budget + self.settings.queue_budget_s + 5
        deadline = time.monotonic() + self.settings.queue_budget_s
        token = ("job:" + flight_token).encode() if flight_token is not None else secrets.token_hex(16).encode()
        seen_token: bytes | None = None
        while True:
            if seen_token is not None:  # a probe we waited for may have finished
                published = await self.store.get(flight + ":result")
                if published is not None and published.startswith(seen_token + b"\n"):
                    self.metrics.joins.inc()
                    model = ProbeResult if mode.light else CheckResult
                    return model.model_validate_json(published[len(seen_token) + 1 :])
            if await self.store.set_nx(flight + ":lock", token, lock_ttl):
                break
            holder = await self.store.get(flight + ":lock")
            if holder is not None and holder == token and flight_token is not None:
                await self.store.set(flight + ":lock", token, lock_ttl)  # (our own dead delivery's: taken over)
                break
            if holder is not None:
                seen_token = holder
            if time.monotonic() > deadline:
                raise TargetBusy(math.ceil(self.settings.queue_budget_s))
            await asyncio.sleep(_POLL_S)
        try:
            result = await self._paced(target, mode, turn, deadline, flight_token)
            payload = token + b"\n" + result.model_dump_json().encode()
            await self.store.set(flight + ":result", payload, 30)
            return result
        finally:
            await self.store.delete_if_equal(flight + ":lock", token)

    async def _paced(
        self, target: ResolvedTarget, mode: CheckMode, turn: Turn, deadline: float, job: str | None = None
    ) -> ProbeResult:
        host = target.url.host
        budget = self.settings.light_probe_timeout_s if mode.light else self.settings.probe_timeout_s
        token = "job:" + job if job is not None else secrets.token_hex(16)
        mine = key("host-client", host, turn.klass, turn.client)
        slots = slots_key(host, turn.klass)
        asked = time.monotonic()
        await self._slot(mine, token, self.settings.host_client_concurrency, budget, deadline, asked)
        try:
            await self._slot(slots, token, self.settings.host_concurrency, budget, deadline, asked)
            try:
                if not await self.turns.take(host, turn.klass, token.encode(), deadline):
                    self.metrics.turn_wait.observe(time.monotonic() - asked)
                    raise self._no_turn()
                started = time.monotonic()
                self.metrics.turn_wait.observe(started - asked)
                pace = ProbePace(
                    self.turns, turn.klass, token, host, FurtherSlots(self.settings.host_concurrency, budget)
                )
                try:
                    with lookups_for(LookupOwner(turn.client, paid=turn.paid)):  # the probe's own lookups too
                        result = await self.probe(target, replace(mode, pace=pace))
                except PaceRefused as exc:  # (its turn lapsed before its first contact, and did not come back)
                    raise self._no_turn() from exc
                finally:
                    await pace.settle()
                self.metrics.probes.labels(status=result.status).inc()
                self.metrics.probe_seconds.observe(time.monotonic() - started)
                return result
            finally:
                await self.store.release_slot(slots, token)
        finally:
            await self.store.release_slot(mine, token)

    def _no_turn(self) -> TargetBusy:
        """The refusal of a check whose host's start turn did not come."""
        return TargetBusy(math.ceil(self.settings.host_start_interval_s))

    async def _slot(self, name: str, token: str, limit: int, budget: float, deadline: float, asked: float) -> None:
        """Take one of ``limit`` slots ``name``, waiting until ``deadline`` (the wait counted from ``asked``).

        A slot lasts until the probe's budget has run out even when its start turn comes last,
        at ``deadline``: a slot that lapsed while its probe ran would let one probe too many in.
        """
        if not await wait_slot(self.store, name, token, limit, deadline + budget + 5, deadline):
            self.metrics.turn_wait.observe(time.monotonic() - asked)
            raise TargetBusy(math.ceil(budget))
