"""Resolve a checked URL and refuse it if any of its addresses is not public.

Policy (:mod:`app.guard.policy`): *all* addresses must be public, not just the first. The
addresses returned here are the only ones the probe's transport will ever dial (no second
lookup, so DNS rebinding cannot move the probe after the check).
"""

from __future__ import annotations

from dataclasses import dataclass

from app.guard.addresses import IPAddress
from app.guard.policy import DEVELOPMENT_KINDS, AddressRefused, clear
from app.guard.resolver import ResolutionFailed, Resolver
from app.guard.url import TargetUrl

__all__ = ["DEVELOPMENT_KINDS", "AddressRefused", "ResolvedTarget", "resolve_target"]


@dataclass(frozen=True, slots=True)
class ResolvedTarget:
    """A target URL with the addresses it may be reached at.

    Attributes:
        url: the checked URL.
        addresses: every address the host resolved to; all public unless the development
            switch is on.
    """

    url: TargetUrl
    addresses: tuple[IPAddress, ...]


async def resolve_target(url: TargetUrl, *, resolver: Resolver, allow_private: bool = False) -> ResolvedTarget:
    """Resolve ``url.host`` once and check every address.

    Args:
        url: a URL that passed :func:`app.guard.url.check_url`.
        resolver: the resolver to ask (bounded in time by itself).
        allow_private: the development switch; when on, loopback and private addresses pass
            (:data:`DEVELOPMENT_KINDS`), nothing else that is not public.

    Returns:
        The :class:`ResolvedTarget`.

    Raises:
        ResolutionFailed: no usable DNS answer (a ``dns`` probe result, not a refusal).
        AddressRefused: ``address_not_public`` when any address is not public (or, under the
            development switch, not loopback or private either).
    """
    if url.ip_literal is not None:
        addresses: list[IPAddress] = [url.ip_literal]
    else:
        addresses = await resolver.resolve(url.host, url.port)
        if not addresses:
            raise ResolutionFailed("dns_no_records", "the host name has no A or AAAA records")
    clear(addresses, allow_private=allow_private)
    return ResolvedTarget(url=url, addresses=tuple(addresses))
