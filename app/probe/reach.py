"""Clearing further URLs a probe wants to fetch (protected resource metadata) through the guard.

Policy: every URL the probe contacts besides the input URL passes the same target guard: form
checks, one bounded lookup, and an address check. A URL that fails is reported, never fetched.
Its host is then pinned in the transport, so the probe still dials only checked addresses.

The caller may add a :data:`ContactPolicy`, asked after the guard and before any lookup: a
reason key it returns refuses the URL (:class:`ContactRefused`, reported as the guard's
refusals are). Probe jobs use it so that a host on the opt-out list is never contacted, not
even when a server names it in its challenge, and a further host is paced as probes are
(:mod:`app.jobs.contact`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from app.errors import SondeError
from app.guard import Resolver, TargetUrl, check_url, resolve_target
from app.net.transport import PinnedBackend

#: Asked before a further URL is contacted: a reason key refuses it, ``None`` clears it.
ContactPolicy = Callable[[TargetUrl], Awaitable[str | None]]


class ContactRefused(SondeError):
    """The caller's :data:`ContactPolicy` refused a further URL (its reason key, for example ``opted_out``)."""


class Reach:
    """The guard, the resolver and the pin table of one probe.

    Args:
        backend: the probe's pinned network backend.
        resolver: the resolver used for hosts not pinned yet.
        allow_private: the development switch.
        policy: the caller's further say on each URL (see the module docs).
    """

    def __init__(
        self, backend: PinnedBackend, resolver: Resolver, *, allow_private: bool, policy: ContactPolicy | None = None
    ) -> None:
        self.backend = backend
        self.resolver = resolver
        self.allow_private = allow_private
        self.policy = policy

    async def clear(self, url: str) -> TargetUrl:
        """Check ``url`` and pin its host (resolving it once, if not pinned yet).

        Raises:
            TargetRefused: the URL's form or addresses are refused.
            ResolutionFailed: the host does not resolve.
            ContactRefused: the policy refused it.
        """
        target = check_url(url, allow_private=self.allow_private)
        if self.policy is not None and (reason := await self.policy(target)) is not None:
            raise ContactRefused(reason, "the URL may not be contacted by this probe")
        if not self.backend.pinned(target.host):
            resolved = await resolve_target(target, resolver=self.resolver, allow_private=self.allow_private)
            self.backend.pin(target.host, resolved.addresses)
        return target
