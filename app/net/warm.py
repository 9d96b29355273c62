"""Connections dialled before they are needed, so no handshake lands on the critical path.

Policy: where the conversation knows that two requests will soon be in flight at once (the
``initialized`` notification beside ``tools/list``; the legacy event stream beside the
POSTs to its endpoint), it asks for one more connection to the same origin while it is still
waiting for an earlier answer. The TCP connect (and the TLS 1.3 handshake, with the very
context and server name the pool would use) then runs during that wait, and the pool's next
new connection to the origin takes the ready connection instead of dialling (RFC 9112 section
9.3 keeps HTTP/1.1 to one request at a time per connection, so overlapping needs two).

At most one connection is warmed per origin at a time, and only while the pool holds at most
one of its own: the probe never has more than two connections to a host open (our
politeness limit). A warm connection nobody claimed is closed with the probe's transport. A
warm dial that failed fails the request that claims it (dialling the same address again would
double the wait); one idle for over :data:`MAX_IDLE_S` is closed and a fresh one dialled; one
the server dropped before answering on it gives its request a retry of its own
(:attr:`WarmPool.died`), so a server's idle-connection timeout never decides a verdict.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Iterable

import httpx2

from app.net.h1.connection import Connection

Open = Callable[[], Awaitable[Connection]]


#: A warm connection idle longer than this is not used (servers close connections that send
#: no request for a few seconds; a fresh dial is safer than a request on a socket that may be dying).
MAX_IDLE_S = 2.0


class WarmPool:
    """Warm connections by ``(host, port)``: begun by :meth:`start`, taken by :meth:`claim`, closed by :meth:`aclose`.

    Attributes:
        died: warm connections the server dropped before any byte came on them.
    """

    def __init__(self) -> None:
        self._pending: dict[tuple[str, int], asyncio.Task[Connection]] = {}
        self._orphans: set[asyncio.Task[Connection]] = set()
        self.died = 0

    def take_death(self) -> bool:
        """Whether a warm connection died before answering since last asked (each death is told once)."""
        if self.died:
            self.died -= 1
            return True
        return False

    def pending(self, key: tuple[str, int]) -> bool:
        """Whether a warm connection for ``key`` is on its way or waiting."""
        return key in self._pending

    def start(self, key: tuple[str, int], open_: Open, timeout: float) -> bool:
        """Begin warming one connection for ``key`` (``False`` when one is already on its way)."""
        if key in self._pending:
            return False

        async def warm() -> Connection:
            async with asyncio.timeout(timeout):
                connection = await open_()
            connection.on_drop = self._dropped
            connection.idle_since = time.monotonic()
            return connection

        self._pending[key] = asyncio.get_running_loop().create_task(warm())
        return True

    def _dropped(self) -> None:
        self.died += 1

    async def claim(self, key: tuple[str, int]) -> Connection | None:
        """The warm connection for ``key``, once ready; ``None`` when there is none or it idled too long.

        Raises:
            httpx2.ConnectError, httpx2.ConnectTimeout: the warm dial failed (dialling the
                same address again would only double the wait).
        """
        task = self._pending.pop(key, None)
        if task is None:
            return None
        try:
            connection = await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.done():  # our caller was cancelled as the dial finished: its connection is closed
                _close_result(task)
            else:  # our caller was cancelled: the dial stops and its socket is closed
                task.cancel()
                self._orphans.add(task)
                task.add_done_callback(self._close_orphan)
            raise
        except TimeoutError as exc:
            raise httpx2.ConnectTimeout("the connection dialled ahead timed out") from exc
        except (httpx2.ConnectError, httpx2.ConnectTimeout):
            raise
        except OSError as exc:
            raise httpx2.ConnectError(str(exc)) from exc
        if time.monotonic() - connection.idle_since > MAX_IDLE_S:
            connection.close()
            return None
        return connection

    def _close_orphan(self, task: asyncio.Task[Connection]) -> None:
        self._orphans.discard(task)
        _close_result(task)

    async def aclose(self) -> None:
        """Close every connection warmed and never claimed."""
        tasks, self._pending = [*self._pending.values(), *self._orphans], {}
        await _close_all(tasks)


async def _close_all(tasks: Iterable[asyncio.Task[Connection]]) -> None:
    for task in tasks:
        task.cancel()
        with contextlib.suppress(BaseException):
            (await task).close()


def _close_result(task: asyncio.Task[Connection]) -> None:
    if not task.cancelled() and task.exception() is None:
        task.result().close()
