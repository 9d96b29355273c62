"""What a probe job may contact besides its URL: the protected resource metadata a server names.

A server's 401 challenge may name a ``resource_metadata`` URL on any host (RFC 9728 section
5.1), and the probe fetches it (:mod:`app.probe.auth`). For a job, that further URL must obey
what the job's own URL obeys (issue policy of the sweeps: an opted-out host is never contacted,
and hosts are paced across all workers), so :func:`contact_policy` answers the probe's
:data:`~app.probe.reach.ContactPolicy`:

- a host or URL on the opt-out list (:mod:`app.optout.known`) is refused, ``opted_out``; a list
  that cannot be read (and no recent copy) refuses every further URL, ``optout_unavailable``
  (the job's own URL was cleared by its source; a further one was not);
- the job's own host is within the probe's turn already;
- another host waits for its start turn like a probe (one new contact per
  ``host_start_interval_s`` across every worker, :meth:`app.service.checks.CheckRunner.start_turn`),
  at most :data:`TURN_WAIT_S`; a turn that does not come refuses it, ``target_busy``.

The refusals are reported in the result's metadata lookups as the guard's are; the URL is not fetched.
"""

from __future__ import annotations

import time
from typing import Final

from app.guard import TargetUrl
from app.optout.known import KnownOptOuts, ListUnknown
from app.probe.reach import ContactPolicy
from app.service.checks import CheckRunner

#: How long a further host's start turn is waited for, seconds (the probe's deadline bounds it too).
TURN_WAIT_S: Final = 2.0


def contact_policy(job_target: TargetUrl, optouts: KnownOptOuts, checks: CheckRunner) -> ContactPolicy:
    """The :data:`~app.probe.reach.ContactPolicy` of one job probing ``job_target`` (see the module docs)."""

    async def clear(url: TargetUrl) -> str | None:
        try:
            if await optouts.covers(url.url):
                return "opted_out"
        except ListUnknown:
            return "optout_unavailable"
        if url.host == job_target.host:
            return None
        if not await checks.start_turn(url.host, "free", time.monotonic() + TURN_WAIT_S):  # (jobs are free)
            return "target_busy"
        return None

    return clear
