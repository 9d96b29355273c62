"""Host name resolution behind a small interface.

Policy: the probe resolves a host exactly once, asks for every A and AAAA record, bounds the
lookup in time, and then connects only to the addresses it got (see
:mod:`app.probe.transport`). A lookup that finds nothing, answers NXDOMAIN or times out is a
normal probe result with status ``dns``, reported through :class:`ResolutionFailed`.

:class:`SystemResolver` uses the operating system's resolver (``getaddrinfo``, which honours
``/etc/hosts`` and the configured name servers). Tests swap in another :class:`Resolver`.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Protocol

import anyio

from app.errors import SondeError
from app.guard.addresses import IPAddress


class ResolutionFailed(SondeError):
    """The host name could not be resolved.

    Reasons: ``dns_nxdomain`` (the name does not exist), ``dns_no_records`` (no A or AAAA
    records), ``dns_timeout`` (no answer in time), ``dns_failure`` (the resolver failed).
    """


class Resolver(Protocol):
    """Resolve a host name to all of its addresses."""

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        """Return every A and AAAA address of ``host``, in resolver order, without duplicates.

        Raises:
            ResolutionFailed: when there is no usable answer.
        """
        ...


_NXDOMAIN_CODES = {socket.EAI_NONAME, getattr(socket, "EAI_NODATA", socket.EAI_NONAME)}


class SystemResolver:
    """:class:`Resolver` over ``getaddrinfo`` (run in a worker thread), bounded by ``timeout_s`` seconds."""

    def __init__(self, timeout_s: float = 3.0) -> None:
        self.timeout_s = timeout_s

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        """See :meth:`Resolver.resolve`."""
        try:
            with anyio.fail_after(self.timeout_s):
                infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except TimeoutError as exc:
            raise ResolutionFailed("dns_timeout", f"no answer within {self.timeout_s} s") from exc
        except socket.gaierror as exc:
            if exc.errno in _NXDOMAIN_CODES:
                raise ResolutionFailed("dns_nxdomain", "the host name does not exist") from exc
            if exc.errno == socket.EAI_AGAIN:
                raise ResolutionFailed("dns_timeout", "the resolver did not answer") from exc
            raise ResolutionFailed("dns_failure", "the resolver failed") from exc
        except OSError as exc:
            raise ResolutionFailed("dns_failure", "the resolver failed") from exc
        addresses: list[IPAddress] = []
        for family, _type, _proto, _canon, sockaddr in infos:
            if family not in (socket.AF_INET, socket.AF_INET6):
                continue
            address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
            if address not in addresses:
                addresses.append(address)
        if not addresses:
            raise ResolutionFailed("dns_no_records", "the host name has no A or AAAA records")
        return addresses
