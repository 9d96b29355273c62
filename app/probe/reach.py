"""Clearing further URLs a probe wants to fetch (protected resource metadata) through the guard.

Policy: every URL the probe contacts besides the input URL passes the same target guard: form
checks, one bounded lookup, and an address check. A URL that fails is reported, never fetched.
Its host is then pinned in the transport, so the probe still dials only checked addresses.
"""

from __future__ import annotations

from app.guard import Resolver, TargetUrl, check_url, resolve_target
from app.probe.transport import PinnedBackend


class Reach:
    """The guard, the resolver and the pin table of one probe.

    Args:
        backend: the probe's pinned network backend.
        resolver: the resolver used for hosts not pinned yet.
        allow_private: the development switch.
    """

    def __init__(self, backend: PinnedBackend, resolver: Resolver, *, allow_private: bool) -> None:
        self.backend = backend
        self.resolver = resolver
        self.allow_private = allow_private

    async def clear(self, url: str) -> TargetUrl:
        """Check ``url`` and pin its host (resolving it once, if not pinned yet).

        Raises:
            TargetRefused: the URL's form or addresses are refused.
            ResolutionFailed: the host does not resolve.
        """
        target = check_url(url, allow_private=self.allow_private)
        if not self.backend.pinned(target.host):
            resolved = await resolve_target(target, resolver=self.resolver, allow_private=self.allow_private)
            self.backend.pin(target.host, resolved.addresses)
        return target
