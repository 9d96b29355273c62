"""A TCP relay on loopback that can be switched off and on: a database that goes away and comes back."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Relay:
    """Listens on a free loopback port; while ``open``, relays each connection to ``target``,
    else closes it at once (as a database that is down would refuse it)."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.open = False
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._live: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if not self.open:
                client.close()
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            self._live += [client, upstream]  # (closed by cut(): both pumps have ended by then or will at once)
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        """Refuse new connections and break the live ones."""
        self.open = False
        live, self._live = self._live, []
        for end in live:
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
            end.close()

    def close(self) -> None:
        self.cut()
        self._listener.close()


@contextmanager
def relay(target: tuple[str, int]) -> Iterator[Relay]:
    """A :class:`Relay` to ``target``, closed on exit."""
    running = Relay(target)
    try:
        yield running
    finally:
        running.close()
