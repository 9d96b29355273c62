"""Connections dialled before they are needed, so no handshake lands on the critical path.

Policy: where the conversation knows that two requests will soon be in flight at once (the
``initialized`` notification beside ``tools/list``; the legacy event stream beside the
POSTs to its endpoint), it asks for one more connection to the same origin while it is still
waiting for an earlier answer. The TCP connect (and the TLS 1.3 handshake, with the very
context and server name the pool would use) then runs during that wait, and the pool's next
new connection to the origin takes the ready socket instead of dialling (RFC 9112 section
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
import ssl
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import httpcore2

Dial = Callable[[], Awaitable[httpcore2.AsyncNetworkStream]]


#: A warm connection idle longer than this is not used (servers close connections that send
#: no request for a few seconds; a fresh dial is safer than a request on a socket that may be dying).
MAX_IDLE_S = 2.0


class WarmStream(httpcore2.AsyncNetworkStream):
    """A socket dialled (and, for https, with TLS already started) ahead of its request.

    httpcore2 calls :meth:`start_tls` right after ``connect_tcp``; when the handshake was
    already made for that context and server name, the TLS stream is handed over as it is.
    A stream that ends or fails before it read anything tells its pool (:attr:`WarmPool.died`):
    the server dropped a connection that had waited, and the request deserves a fresh one.
    """

    def __init__(
        self, stream: httpcore2.AsyncNetworkStream, tls_for: tuple[ssl.SSLContext, str] | None, pool: WarmPool
    ) -> None:
        self._stream = stream
        self._tls_for = tls_for
        self._pool = pool
        self._answered = False
        self.ready_at = time.monotonic()

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ASYNC109
        try:
            data = await self._stream.read(max_bytes, timeout)
        except (httpcore2.ReadError, httpcore2.NetworkError):
            self._dead()
            raise
        if data:
            self._answered = True
        else:
            self._dead()
        return data

    def _dead(self) -> None:
        if not self._answered:
            self._answered = True  # (told once)
            self._pool.died += 1

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109
        try:
            await self._stream.write(buffer, timeout)
        except (httpcore2.WriteError, httpcore2.NetworkError):
            self._dead()
            raise

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore2's interface)
    ) -> httpcore2.AsyncNetworkStream:
        if self._tls_for == (ssl_context, server_hostname):
            return self
        if self._tls_for is not None:  # made for another context or name: not usable for this one
            await self._stream.aclose()
            raise httpcore2.ConnectError("the warmed connection was made for another TLS context")
        self._stream = await self._stream.start_tls(ssl_context, server_hostname, timeout)
        return self

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class WarmPool:
    """Warm dials by origin: started with :meth:`start`, taken by :meth:`claim`, closed by :meth:`aclose`.

    Attributes:
        died: warm connections the server dropped before answering on them (see :class:`WarmStream`).
    """

    def __init__(self) -> None:
        self._pending: dict[tuple[str, int], asyncio.Task[WarmStream]] = {}
        self._orphans: set[asyncio.Task[WarmStream]] = set()
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

    def start(self, key: tuple[str, int], dial: Dial, tls: tuple[ssl.SSLContext, str] | None, timeout: float) -> bool:
        """Begin warming one connection for ``key`` (``False`` when one is already on its way)."""
        if key in self._pending:
            return False

        async def warm() -> WarmStream:
            async with asyncio.timeout(timeout):
                stream = await dial()
                if tls is None:
                    return WarmStream(stream, None, self)
                try:
                    return WarmStream(await stream.start_tls(tls[0], tls[1], timeout), tls, self)
                except BaseException:
                    await stream.aclose()
                    raise

        self._pending[key] = asyncio.get_running_loop().create_task(warm())
        return True

    async def claim(self, key: tuple[str, int]) -> WarmStream | None:
        """The warm connection for ``key``, once ready; ``None`` when there is none or it idled too long.

        Raises:
            httpcore2.ConnectError, httpcore2.ConnectTimeout: the warm dial failed (dialling the
                same address again would only double the wait).
        """
        task = self._pending.pop(key, None)
        if task is None:
            return None
        try:
            stream = await asyncio.shield(task)
        except asyncio.CancelledError:
            if not task.done():  # our caller was cancelled: the dial stops and its socket is closed
                task.cancel()
                self._orphans.add(task)
                task.add_done_callback(self._close_orphan)
            raise
        except TimeoutError as exc:
            raise httpcore2.ConnectTimeout("the connection dialled ahead timed out") from exc
        except (httpcore2.ConnectError, httpcore2.ConnectTimeout):
            raise
        except OSError as exc:
            raise httpcore2.ConnectError(str(exc)) from exc
        if time.monotonic() - stream.ready_at > MAX_IDLE_S:
            await stream.aclose()
            return None
        return stream

    def _close_orphan(self, task: asyncio.Task[WarmStream]) -> None:
        self._orphans.discard(task)
        _close_result(task)

    async def aclose(self) -> None:
        """Close every connection warmed and never claimed."""
        tasks, self._pending = [*self._pending.values(), *self._orphans], {}
        await _close_all(tasks)


async def _close_all(tasks: Iterable[asyncio.Task[WarmStream]]) -> None:
    for task in tasks:
        task.cancel()
        with contextlib.suppress(BaseException):
            stream = await task
            await stream.aclose()


def _close_result(task: asyncio.Task[WarmStream]) -> None:
    if task.cancelled() or task.exception() is not None:
        return
    stream = task.result()
    asyncio.get_running_loop().create_task(stream.aclose())
