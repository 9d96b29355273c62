"""Which IP addresses count as public, and what the others are.

Policy: an address is public only if it is global unicast and none of the special-purpose
blocks of the IANA IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890 and its
updates) covers it. IPv6 forms that embed an IPv4 address (IPv4-mapped and -compatible,
RFC 4291 section 2.5.5; 6to4, RFC 3056; NAT64 well-known prefix, RFC 6052) are judged by the
embedded address too, so ``::ffff:127.0.0.1`` or ``2002:7f00:1::`` never pass; Teredo
(RFC 4380) tunnels are refused outright. Anything outside ``2000::/3`` (RFC 4291 global
unicast) is not public.
"""

from __future__ import annotations

import ipaddress
from typing import Final

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_V4_BLOCKS: Final[tuple[tuple[ipaddress.IPv4Network, str], ...]] = tuple(
    (ipaddress.IPv4Network(net), kind)
    for net, kind in (
        ("0.0.0.0/8", "unspecified"),
        ("10.0.0.0/8", "private"),
        ("100.64.0.0/10", "cgnat"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link_local"),
        ("172.16.0.0/12", "private"),
        ("192.0.0.0/24", "reserved"),
        ("192.0.2.0/24", "documentation"),
        ("192.31.196.0/24", "reserved"),
        ("192.52.193.0/24", "reserved"),
        ("192.88.99.0/24", "reserved"),
        ("192.168.0.0/16", "private"),
        ("192.175.48.0/24", "reserved"),
        ("198.18.0.0/15", "benchmarking"),
        ("198.51.100.0/24", "documentation"),
        ("203.0.113.0/24", "documentation"),
        ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/4", "reserved"),
    )
)

_V6_BLOCKS: Final[tuple[tuple[ipaddress.IPv6Network, str], ...]] = tuple(
    (ipaddress.IPv6Network(net), kind)
    for net, kind in (
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("64:ff9b:1::/48", "private"),
        ("100::/64", "reserved"),
        ("2001:2::/48", "benchmarking"),
        ("2001:db8::/32", "documentation"),
        ("2001:10::/28", "reserved"),
        ("3fff::/20", "documentation"),
        ("5f00::/16", "reserved"),
        ("fc00::/7", "unique_local"),
        ("fe80::/10", "link_local"),
        ("fec0::/10", "site_local"),
        ("ff00::/8", "multicast"),
    )
)
#: IANA: 2001::/23 (IETF protocol assignments) is not globally reachable, except these blocks.
_IETF_PROTOCOL: Final = ipaddress.IPv6Network("2001::/23")
_IETF_GLOBAL: Final = tuple(
    ipaddress.IPv6Network(net) for net in ("2001:1::1/128", "2001:1::2/128", "2001:3::/32", "2001:4:112::/48")
)
_V6_GLOBAL_UNICAST: Final = ipaddress.IPv6Network("2000::/3")
_NAT64_WKP: Final = ipaddress.IPv6Network("64:ff9b::/96")
_SIX_TO_FOUR: Final = ipaddress.IPv6Network("2002::/16")
_TEREDO: Final = ipaddress.IPv6Network("2001::/32")
_V4_COMPATIBLE: Final = ipaddress.IPv6Network("::/96")


def _classify_v4(address: ipaddress.IPv4Address) -> str | None:
    for network, kind in _V4_BLOCKS:
        if address in network:
            return kind
    if not address.is_global:
        return "reserved"
    return None


def _embedded_v4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    if address.ipv4_mapped is not None:
        return [address.ipv4_mapped]
    if address in _V4_COMPATIBLE:
        return [ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)]
    if address in _NAT64_WKP:
        return [ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)]
    if address in _SIX_TO_FOUR:
        return [ipaddress.IPv4Address((int(address) >> 80) & 0xFFFFFFFF)]
    return []


def classify(address: IPAddress) -> str | None:
    """Say why an address is not public, or ``None`` when it is public.

    Args:
        address: an IPv4 or IPv6 address.

    Returns:
        ``None`` for a public address, else a kind: ``loopback``, ``private``, ``link_local``,
        ``cgnat``, ``unique_local``, ``site_local``, ``multicast``, ``reserved``,
        ``documentation``, ``benchmarking``, ``unspecified`` or ``teredo``; an embedded IPv4
        address that is not public gives ``embedded_<kind>`` (for example ``embedded_loopback``).
    """
    if isinstance(address, ipaddress.IPv4Address):
        return _classify_v4(address)
    if address.scope_id:
        return "link_local"
    embedded = _embedded_v4(address)
    if address.ipv4_mapped is not None or address in _V4_COMPATIBLE:
        if address == ipaddress.IPv6Address("::"):
            return "unspecified"
        if address == ipaddress.IPv6Address("::1"):
            return "loopback"
        kind = _classify_v4(embedded[0])
        return None if kind is None and address.ipv4_mapped is not None else f"embedded_{kind or 'reserved'}"
    for network, kind_v6 in _V6_BLOCKS:
        if address in network:
            return kind_v6
    if address in _TEREDO:
        return "teredo"
    if address in _IETF_PROTOCOL and not any(address in net for net in _IETF_GLOBAL):
        return "reserved"  # IANA: 2001::/32 is not globally reachable; a tunnel endpoint is never a target
    for inner in embedded:
        inner_kind = _classify_v4(inner)
        if inner_kind is not None:
            return f"embedded_{inner_kind}"
    if address not in _V6_GLOBAL_UNICAST and address not in _NAT64_WKP:
        return "reserved"
    return None


def is_public(address: IPAddress) -> bool:
    """``True`` when :func:`classify` finds nothing wrong with the address."""
    return classify(address) is None
