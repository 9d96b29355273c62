"""The connections of one probe or fetch: at most a few open at once, reused while they may be.

Policy: at most ``max_connections`` connections are open or being opened at any time, for all
origins together (our politeness limit; a connection dialled ahead counts once it is taken).
A request takes an idle connection to its origin that is still usable and was idle for at
most ``keepalive_s`` (an older one may be closing on the server's side); else it opens one
while there is room, closing an idle connection to another origin to make it; else it waits
for one to come back, at most ``timeout`` seconds (``httpx2.PoolTimeout``). Closing the pool
closes every connection, in use or not.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Awaitable, Callable

import httpx2

from app.net.h1.connection import Connection

#: ``(scheme, host, port)``.
Origin = tuple[str, str, int]


class ConnectionPool:
    """See the module docs; ``connect`` opens a new connection to an origin."""

    def __init__(
        self, connect: Callable[[Origin], Awaitable[Connection]], *, max_connections: int, keepalive_s: float
    ) -> None:
        self._connect = connect
        self._max = max_connections
        self._keepalive_s = keepalive_s
        self._idle: list[tuple[Origin, Connection]] = []
        self._all: set[Connection] = set()
        self._opening = 0
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()

    @property
    def open_count(self) -> int:
        """Connections open or being opened."""
        return len(self._all) + self._opening

    async def acquire(self, origin: Origin, timeout: float | None) -> Connection:  # noqa: ASYNC109
        """A connection to ``origin`` for one request; give it back with :meth:`release`.

        Raises:
            httpx2.PoolTimeout: no connection came free in time.
            httpx2.ConnectError, httpx2.ConnectTimeout: opening one failed.
        """
        deadline = None if timeout is None else asyncio.get_running_loop().time() + timeout
        while True:
            connection = self._take_idle(origin)
            if connection is not None:
                return connection
            if self.open_count >= self._max and self._idle:
                _, other = self._idle.pop(0)  # room for this origin: the longest idle connection goes
                self._drop(other)
            if self.open_count < self._max:
                self._opening += 1
                try:
                    connection = await self._connect(origin)
                finally:
                    self._opening -= 1
                    self._notify()
                self._all.add(connection)
                return connection
            await self._wait(deadline)

    def release(self, connection: Connection, reusable: bool, origin: Origin) -> None:
        """``connection`` is free again (kept for ``origin`` when ``reusable``, else closed)."""
        if reusable and connection in self._all:
            self._idle.append((origin, connection))
        else:
            self._drop(connection)
        self._notify()

    async def aclose(self) -> None:
        """Close every connection."""
        connections, self._all, self._idle = list(self._all), set(), []
        for connection in connections:
            connection.close()

    def _take_idle(self, origin: Origin) -> Connection | None:
        now = time.monotonic()
        for index in range(len(self._idle) - 1, -1, -1):
            kept, connection = self._idle[index]
            if not connection.usable or now - connection.idle_since > self._keepalive_s:
                del self._idle[index]
                self._drop(connection)
            elif kept == origin:
                del self._idle[index]
                return connection
        return None

    def _drop(self, connection: Connection) -> None:
        self._all.discard(connection)
        connection.close()

    async def _wait(self, deadline: float | None) -> None:  # (deadline: on the loop's clock)
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            async with asyncio.timeout_at(deadline):
                await waiter
        except TimeoutError:
            raise httpx2.PoolTimeout("no connection came free in time") from None
        finally:
            if waiter in self._waiters:
                self._waiters.remove(waiter)

    def _notify(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
