"""Opening a connection to an address that was already checked: the socket, then TLS, then HTTP/1.1.

Policy: a :class:`Dialler` turns an IP address and port into a connected socket and never
resolves a name (the pin table, :class:`app.net.transport.PinnedBackend`, hands it only
addresses the target guard cleared). :func:`open_connection` then starts TLS on that socket
with the caller's context and server name (RFC 6066 section 3: the host name, never the
address) and puts an HTTP/1.1 :class:`~app.net.h1.connection.Connection` on it. Every socket
has ``TCP_NODELAY`` (a request is written in one piece; nothing gains from Nagle's delay).

Failures raise httpx2's exception classes (the vocabulary of :mod:`app.probe.classify`): no
answer in time, ``ConnectTimeout``; refused, unreachable or a failed TLS handshake,
``ConnectError`` with the ``OSError`` or ``ssl.SSLError`` as its cause.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
import ssl
from collections.abc import AsyncIterator
from typing import Protocol

import httpx2

from app.net.h1.connection import Connection


class Dialler(Protocol):
    """Connects a TCP socket to an IP address (tests pass one that routes to loopback)."""

    async def connect_tcp(self, address: str, port: int, timeout: float) -> socket.socket:  # noqa: ASYNC109
        """A connected, non-blocking socket to ``address:port``.

        Raises:
            httpx2.ConnectError: refused or unreachable.
            httpx2.ConnectTimeout: no answer within ``timeout`` seconds.
        """
        ...


class SocketDialler:
    """The real network: one non-blocking ``connect`` on the running event loop."""

    async def connect_tcp(self, address: str, port: int, timeout: float) -> socket.socket:  # noqa: ASYNC109
        family = socket.AF_INET6 if ipaddress.ip_address(address).version == 6 else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        async with _connecting(sock, timeout, f"no answer from {address} port {port} in time"):
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            await asyncio.get_running_loop().sock_connect(sock, (address, port))
        return sock


async def open_connection(
    sock: socket.socket,
    tls: tuple[ssl.SSLContext, str] | None,
    timeout: float,  # noqa: ASYNC109
) -> Connection:
    """An HTTP/1.1 connection on ``sock``, with TLS (``(context, server name)``) when asked for.

    The socket is closed when this fails.

    Raises:
        httpx2.ConnectError: the TLS handshake failed (the ``ssl.SSLError`` as its cause).
        httpx2.ConnectTimeout: the handshake took longer than ``timeout`` seconds.
    """
    loop = asyncio.get_running_loop()
    async with _connecting(sock, timeout, "the TLS handshake did not finish in time"):
        if tls is None:
            _, protocol = await loop.create_connection(Connection, sock=sock)
        else:
            _, protocol = await loop.create_connection(
                Connection, sock=sock, ssl=tls[0], server_hostname=tls[1], ssl_handshake_timeout=timeout + 1
            )
    return protocol


@contextlib.asynccontextmanager
async def _connecting(sock: socket.socket, timeout: float, late: str) -> AsyncIterator[None]:  # noqa: ASYNC109
    """At most ``timeout`` seconds; on any failure ``sock`` is closed and the failure told in httpx2's terms."""
    try:
        async with asyncio.timeout(timeout):
            yield
    except TimeoutError:
        sock.close()
        raise httpx2.ConnectTimeout(late) from None
    except OSError as exc:  # (ssl.SSLError is one)
        sock.close()
        raise httpx2.ConnectError(f"{exc.strerror or exc}") from exc
    except BaseException:
        sock.close()
        raise
