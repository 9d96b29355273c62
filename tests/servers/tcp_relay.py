"""A TCP relay on loopback that can be switched off and on, slowed or stalled: a database or a Redis
that goes away, answers late or hangs, and comes back."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


class Relay:
    """Listens on a free loopback port; while ``open``, relays each connection to ``target``,
    else closes it at once (as a database that is down would refuse it). ``delay_s`` holds each
    chunk that long before passing it on (a slow server); while ``stalled`` is set nothing is
    passed on and connections stay open (a hung one)."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.open = False
        self.delay_s = 0.0
        self.flowing = threading.Event()
        self.flowing.set()
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

    def stall(self) -> None:
        """Pass nothing on until :meth:`resume` (connections stay open)."""
        self.flowing.clear()

    def resume(self) -> None:
        """Pass data on again."""
        self.flowing.set()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                self.flowing.wait()
                if self.delay_s:
                    time.sleep(self.delay_s)  # (a slow link is what is under test)
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
        self.flowing.set()  # (stalled pumps end with their sockets)
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
