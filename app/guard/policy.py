"""Which addresses a target may have: the guard's address policy as a plain function.

Policy: *all* addresses must be public, not just the first: a name that answers one public and
one private address is refused, because the connection could otherwise be steered to the
private one. Under the development switch, this machine and private networks pass too
(:data:`DEVELOPMENT_KINDS`); link-local (with the cloud metadata address 169.254.169.254),
multicast, unspecified, reserved and documentation addresses never do.

This module needs only the standard library, so the command line can clear its target before
the probe's own modules are imported (:mod:`app.cli.predial`); :func:`app.guard.target.resolve_target`
applies the same function to what its resolver answered.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from typing import Any

from app.errors import TargetRefused
from app.guard.addresses import IPAddress, classify
from app.guard.url import REFUSAL_REASONS

#: What the development switch lets through: this machine and private networks.
DEVELOPMENT_KINDS = frozenset({"loopback", "private", "unique_local", "cgnat"})


class AddressRefused(TargetRefused):
    """``address_not_public``, saying which kinds of address were refused (``kinds``, see
    :func:`app.guard.addresses.classify`), so a caller can tell this machine from the internet."""

    def __init__(self, kinds: tuple[str, ...]) -> None:
        super().__init__("address_not_public", f"{REFUSAL_REASONS['address_not_public']} ({', '.join(kinds)})")
        self.kinds = kinds


def clear(addresses: Iterable[IPAddress], *, allow_private: bool = False) -> None:
    """Refuse unless every address may be dialled (see the module docs).

    Raises:
        AddressRefused: ``address_not_public``, with the kinds refused.
    """
    kinds = sorted({kind for kind in (classify(a) for a in addresses) if kind is not None})
    if allow_private:
        kinds = [kind for kind in kinds if kind.removeprefix("embedded_") not in DEVELOPMENT_KINDS]
    if kinds:
        raise AddressRefused(tuple(kinds))


def addresses_of(infos: Iterable[tuple[Any, ...]]) -> list[IPAddress]:
    """The distinct IPv4 and IPv6 addresses of a ``getaddrinfo`` answer, in its order (scope ids dropped)."""
    addresses: list[IPAddress] = []
    for family, _type, _proto, _canon, sockaddr in infos:
        if family not in (socket.AF_INET, socket.AF_INET6):
            continue
        address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if address not in addresses:
            addresses.append(address)
    return addresses
