"""Which IP a request comes from.

Policy: the socket peer, unless the peer is a trusted proxy (setting ``trusted_proxies``);
then the right-most ``X-Forwarded-For`` entry that is not itself a trusted proxy (entries to
its left are client-supplied and may be forged). An entry is read as an address, with a port
or brackets as proxies write them (``1.2.3.4:5678``, ``[2001:db8::1]:443``); an entry that is
no address at all ends the search and the peer is the client (an unparsable value never
becomes a rate-limit key of its own). IPv6 clients are keyed by their /64, since one host
usually holds a whole /64 (:func:`app.checking.clients.rate_key`).
"""

from __future__ import annotations

import ipaddress

from starlette.requests import Request
from starlette.types import Scope

from app.checking.clients import Network


def _trusted(address: str, networks: tuple[Network, ...]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in networks)


def is_trusted_proxy(peer: str, trusted: tuple[Network, ...]) -> bool:
    """Whether the socket peer ``peer`` (text) is one of the ``trusted`` proxies."""
    return bool(trusted) and _trusted(peer, trusted)


def client_ip(request: Request, trusted: tuple[Network, ...]) -> str:
    """The client's IP (text) as policy says; ``"unknown"`` when the server has no peer address."""
    return scope_client_ip(request.scope, trusted)


def scope_client_ip(scope: Scope, trusted: tuple[Network, ...]) -> str:
    """:func:`client_ip` of an ASGI connection scope."""
    client = scope.get("client")
    peer = str(client[0]) if client else "unknown"
    if trusted and _trusted(peer, trusted):
        values = [value.decode("latin-1") for name, value in scope["headers"] if name == b"x-forwarded-for"]
        forwarded = [part.strip() for part in ",".join(values).split(",")]
        for entry in reversed([part for part in forwarded if part]):
            candidate = _address(entry)
            if candidate is None:
                break  # not an address: the proxy's own peer is all we know
            if not _trusted(candidate, trusted):
                peer = candidate
                break
    return peer


def _address(entry: str) -> str | None:
    """The IP address in one ``X-Forwarded-For`` entry (a port or brackets allowed), normalised."""
    text = entry
    if text.startswith("["):  # [v6]:port or [v6]
        text = text[1:].split("]", 1)[0]
    elif text.count(":") == 1:  # v4:port
        text = text.split(":", 1)[0]
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        return None
