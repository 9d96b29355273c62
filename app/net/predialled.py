"""A network backend that hands the first connection to one address a socket dialled earlier.

The command line dials its target while it is still importing the probe (:mod:`app.cli.predial`),
so the first packet does not wait for those imports. This backend sits inside the pinned
backend (:class:`app.net.transport.PinnedBackend` passes it the addresses the guard cleared):
the first ``connect_tcp`` to exactly the address and port dialled takes that socket; every
other connection, and that one too when the socket was closed by the server meanwhile, is
dialled by the inner backend as usual. A socket never taken is closed with :meth:`aclose`.
"""

from __future__ import annotations

import select
import socket
from collections.abc import Iterable

import anyio
import httpcore2
from anyio.abc import SocketStream
from httpcore2._backends.anyio import AnyIOStream


def _still_open(sock: socket.socket) -> bool:
    """No end of stream and no error waiting on ``sock`` (a server may close an idle connection)."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        return not readable or sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
    except OSError:
        return False


class PreDialled(httpcore2.AsyncNetworkBackend):
    """``inner`` (default httpcore2's anyio backend), but ``sock``, connected to ``address:port``,
    for the first connection to it."""

    def __init__(
        self, sock: socket.socket, address: str, port: int, inner: httpcore2.AsyncNetworkBackend | None = None
    ) -> None:
        self._sock: socket.socket | None = sock
        self._key = (address, port)
        self._inner = inner or httpcore2.AnyIOBackend()
        self.taken = False

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore2's interface)
        local_address: str | None = None,
        socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        sock, self._sock = self._sock, None
        if sock is not None and (host, port) == self._key and local_address is None and _still_open(sock):
            try:
                sock.setblocking(False)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                for option in socket_options or ():
                    sock.setsockopt(*option)
                stream = await SocketStream.from_socket(sock)
            except OSError:
                sock.close()
            else:
                self.taken = True
                return AnyIOStream(stream)
        elif sock is not None:
            sock.close()
        return await self._inner.connect_tcp(host, port, timeout, local_address, socket_options)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore2's interface)
        socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        return await self._inner.connect_unix_socket(path, timeout, socket_options)

    async def sleep(self, seconds: float) -> None:
        await anyio.sleep(seconds)

    def aclose(self) -> None:
        """Close the socket if no connection took it."""
        sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()
