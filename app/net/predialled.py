"""A dialler that hands the first connection to one address a socket dialled earlier.

The command line dials its target while it is still importing the probe (:mod:`app.cli.predial`),
so the first packet does not wait for those imports. This dialler sits inside the pinned
backend (:class:`app.net.transport.PinnedBackend` passes it the addresses the guard cleared):
the first connection to exactly the address and port dialled takes that socket; every other
connection, and that one too when the socket was closed by the server meanwhile, is dialled
by the inner dialler as usual. A socket never taken is closed with :meth:`aclose`.
"""

from __future__ import annotations

import select
import socket

from app.net.dial import Dialler, SocketDialler


def _still_open(sock: socket.socket) -> bool:
    """No end of stream and no error waiting on ``sock`` (a server may close an idle connection)."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        return not readable or sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
    except OSError:
        return False


class PreDialled:
    """``inner`` (default: the real network), but ``sock`` (connected to ``address:port``) the first time."""

    def __init__(self, sock: socket.socket, address: str, port: int, inner: Dialler | None = None) -> None:
        self._sock: socket.socket | None = sock
        self._key = (address, port)
        self._inner = inner or SocketDialler()
        self.taken = False

    async def connect_tcp(self, address: str, port: int, timeout: float) -> socket.socket:  # noqa: ASYNC109
        sock, self._sock = self._sock, None
        if sock is not None and (address, port) == self._key and _still_open(sock):
            try:
                sock.setblocking(False)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                sock.close()
            else:
                self.taken = True
                return sock
        elif sock is not None:
            sock.close()
        return await self._inner.connect_tcp(address, port, timeout)

    def aclose(self) -> None:
        """Close the socket if no connection took it."""
        sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()
