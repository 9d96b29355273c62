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

#: What the development switch lets through: this machine and private networks. Link-local
#: (including the cloud metadata address 169.254.169.254), multicast, unspecified, reserved
#: and documentation addresses stay refused even then.
DEVELOPMENT_KINDS = frozenset({"loopback", "private", "unique_local", "cgnat"})


class AddressRefused(TargetRefused):
    """``address_not_public``, saying which kinds of address were refused (``kinds``, see
    :func:`app.guard.addresses.classify`), so a caller can tell this machine from the internet."""

    def __init__(self, kinds: tuple[str, ...]) -> None:
        super().__init__("address_not_public", f"{REFUSAL_REASONS['address_not_public']} ({', '.join(kinds)})")
        self.kinds = kinds


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
    kinds = sorted({kind for kind in (classify(a) for a in addresses) if kind is not None})
    if allow_private:
        kinds = [kind for kind in kinds if kind.removeprefix("embedded_") not in DEVELOPMENT_KINDS]
    if kinds:
        raise AddressRefused(tuple(kinds))
    return ResolvedTarget(url=url, addresses=tuple(addresses))
