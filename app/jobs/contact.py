"""What a probe job may contact besides its URL: the protected resource metadata a server names.

A server's 401 challenge may name a ``resource_metadata`` URL on any host (RFC 9728 section
5.1), and the probe fetches it (:mod:`app.probe.auth`). For a job, that further URL must obey
what the job's own URL obeys (issue policy of the sweeps: an opted-out host is never contacted),
so :func:`contact_policy` answers the probe's :data:`~app.probe.reach.ContactPolicy`:

- a host or URL on the opt-out list (:mod:`app.optout.known`) is refused, ``opted_out``; a list
  that cannot be read (and no recent copy) refuses every further URL, ``optout_unavailable``
  (the job's own URL was cleared by its source; a further one was not).

The refusals are reported in the result's metadata lookups as the guard's are; the URL is not
fetched. A further host cleared here is still paced as every probe's hosts are, at its first
connection (one new contact per ``host_start_interval_s`` across every worker; a turn that does
not come refuses it, ``target_busy``: :mod:`app.checking.turns`).
"""

from __future__ import annotations

from app.guard import TargetUrl
from app.optout.known import KnownOptOuts, ListUnknown
from app.probe.reach import ContactPolicy


def contact_policy(optouts: KnownOptOuts) -> ContactPolicy:
    """The :data:`~app.probe.reach.ContactPolicy` of a probe job (see the module docs)."""

    async def clear(url: TargetUrl) -> str | None:
        try:
            if await optouts.covers(url.url):
                return "opted_out"
        except ListUnknown:
            return "optout_unavailable"
        return None

    return clear
