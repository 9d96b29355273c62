"""Who a client is, for its limits and shares: its address keyed by its network.

Policy: an IPv4 client is its address; an IPv6 client is its /64, since one host usually holds
a whole /64 (an IPv4-mapped address is its IPv4 address). Which address a request comes from
is the HTTP layer's to say (:mod:`app.http.middleware.clientip`, behind the trusted proxies
listed here).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(items: Sequence[str]) -> tuple[Network, ...]:
    """The trusted proxy networks from their text form."""
    return tuple(ipaddress.ip_network(item, strict=False) for item in items)


def rate_key(address: str) -> str:
    """The key an address is limited under: itself for IPv4, its /64 for IPv6."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address[:64]
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)
