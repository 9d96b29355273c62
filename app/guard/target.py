"""Resolve a checked URL and refuse it if any of its addresses is not public.

Policy: *all* addresses must be public, not just the first: a name that answers one public and
one private address is refused, because the connection could otherwise be steered to the
private one. The addresses returned here are the only ones the probe's transport will ever
dial (no second lookup, so DNS rebinding cannot move the probe after the check).
"""

from __future__ import annotations

from dataclasses import dataclass

from app.errors import TargetRefused
from app.guard.addresses import IPAddress, classify
from app.guard.resolver import ResolutionFailed, Resolver
from app.guard.url import REFUSAL_REASONS, TargetUrl


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
        allow_private: the development switch; when on, non-public addresses pass.

    Returns:
        The :class:`ResolvedTarget`.

    Raises:
        ResolutionFailed: no usable DNS answer (a ``dns`` probe result, not a refusal).
        TargetRefused: ``address_not_public`` when any address is not public.
    """
    if url.ip_literal is not None:
        addresses: list[IPAddress] = [url.ip_literal]
    else:
        addresses = await resolver.resolve(url.host, url.port)
        if not addresses:
            raise ResolutionFailed("dns_no_records", "the host name has no A or AAAA records")
    if not allow_private:
        kinds = sorted({kind for kind in (classify(a) for a in addresses) if kind is not None})
        if kinds:
            raise TargetRefused("address_not_public", f"{REFUSAL_REASONS['address_not_public']} ({', '.join(kinds)})")
    return ResolvedTarget(url=url, addresses=tuple(addresses))
