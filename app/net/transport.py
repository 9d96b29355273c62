"""The HTTP/1.1 transport of a probe or fetch, which only ever dials addresses the guard already checked.

Policy: the probe resolves a host once (:mod:`app.guard.target`) and *pins* the answer here.
:class:`PinnedBackend` looks a connection's host up in that pin table and dials the pinned
addresses in order through a :class:`~app.net.dial.Dialler`: it never resolves a name, and a
host that was not pinned cannot be reached at all. The URL keeps its host name, so the
``Host`` header and the TLS SNI / certificate name check stay the host name (RFC 9110
section 7.2, RFC 6066 section 3). The first connection to each host waits for the caller's
start turn (:mod:`app.net.pace`).

:class:`PinnedTransport` sends one request at a time per connection (:mod:`app.net.h1`), at
most :data:`MAX_CONNECTIONS` connections in all. There is no client layer above it: no cookie
is ever stored or sent, no proxy variable is read, no redirect is followed, no content coding
is undone (the caller decodes and caps, :mod:`app.probe.body`), and only HTTP/1.1 is spoken.
"""

from __future__ import annotations

import functools
import socket
import ssl
from collections.abc import Awaitable, Callable, Iterable, Mapping
from types import TracebackType

import httpx2

from app.guard.addresses import IPAddress
from app.net.dial import Dialler, SocketDialler, open_connection
from app.net.h1.connection import Connection
from app.net.h1.fields import Fields
from app.net.h1.head import request_head
from app.net.h1.pool import ConnectionPool, Origin
from app.net.h1.response import Response
from app.net.pace import Pace
from app.net.warm import WarmPool

#: Told whether a request reached the wire (``True``) or a step before failed (``False``).
Written = Callable[[bool], Awaitable[None]]


class PinnedBackend:
    """Opens connections to host names at pre-checked addresses only.

    Args:
        pins: host (lower-case ASCII host name, or IP address text) -> addresses to dial, in
            order. Add hosts later with :meth:`pin` after they pass the guard.
        inner: connects the sockets (default: the real network). Tests pass one that routes
            to loopback.
        pace: asked before the first connection to each host (:mod:`app.net.pace`).
    """

    def __init__(
        self,
        pins: Mapping[str, Iterable[IPAddress]] | None = None,
        inner: Dialler | None = None,
        pace: Pace | None = None,
    ) -> None:
        self._pins: dict[str, tuple[str, ...]] = {}
        self._pace = pace
        self._contacted: set[str] = set()
        self._inner = inner or SocketDialler()
        self.dialled: list[tuple[str, int]] = []
        self.warm = WarmPool()
        self._deferred: dict[tuple[str, int], Callable[[], bool]] = {}
        for host, addresses in (pins or {}).items():
            self.pin(host, addresses)

    def pin(self, host: str, addresses: Iterable[IPAddress]) -> None:
        """Allow ``host`` and bind it to ``addresses`` (replacing any earlier pin)."""
        self._pins[host.lower()] = tuple(str(address) for address in addresses)

    def pinned(self, host: str) -> bool:
        """``True`` when ``host`` may be dialled."""
        return host.lower() in self._pins

    async def connect(
        self,
        host: str,
        port: int,
        tls: tuple[ssl.SSLContext, str] | None,
        timeout: float,  # noqa: ASYNC109
    ) -> Connection:
        """A warm connection to ``host:port`` if one was dialled ahead; else one dialled at the pinned addresses.

        Raises:
            httpx2.ConnectError: the host was never pinned, no address accepted, or TLS failed.
            httpx2.ConnectTimeout: the last address tried, or the TLS handshake, timed out.
        """
        key = (host.lower().strip("[]"), port)
        deferred = self._deferred.pop(key, None)
        connection = await self.warm.claim(key) or await self._open(key[0], port, tls, timeout)
        if deferred is not None:  # asked for before the first connection: dial it beside that one's TLS
            deferred()
        return connection

    async def settle(self) -> None:
        """No more overlapping requests: close what was dialled ahead and forget what was asked for."""
        self._deferred.clear()
        await self.warm.aclose()

    def preconnect(
        self,
        host: str,
        port: int,
        *,
        tls: tuple[ssl.SSLContext, str] | None,
        timeout: float,
        after_next: bool = False,
        room: Callable[[], bool] = lambda: True,
    ) -> bool:
        """Dial ``host:port`` in the background for the next new connection (see :mod:`app.net.warm`).

        ``after_next``: no connection is open yet, so the next one dialled is the first; this one is
        started as soon as that connects (otherwise the first request would take it).
        ``room``: asked again when a deferred dial is about to start (the politeness limit).
        ``False`` when the host was never pinned or a warm connection is already on its way.
        """
        key = (host.lower().strip("[]"), port)
        if key[0] not in self._pins or self.warm.pending(key):
            return False

        def open_() -> Awaitable[Connection]:
            return self._open(key[0], port, tls, timeout)

        if after_next:
            self._deferred[key] = lambda: room() and self.warm.start(key, open_, timeout)
            return True
        return self.warm.start(key, open_, timeout)

    async def _open(
        self,
        host: str,
        port: int,
        tls: tuple[ssl.SSLContext, str] | None,
        timeout: float,  # noqa: ASYNC109
    ) -> Connection:
        return await open_connection(await self.connect_tcp(host, port, timeout), tls, timeout)

    async def connect_tcp(self, host: str, port: int, timeout: float) -> socket.socket:  # noqa: ASYNC109
        """A socket connected to the first pinned address of ``host`` that accepts (no TLS, no HTTP).

        Raises:
            httpx2.ConnectError, httpx2.ConnectTimeout: as :meth:`connect`.
            PaceRefused: no start turn for a first contact came in time.
        """
        host = host.lower().strip("[]")
        addresses = self._pins.get(host)
        if not addresses:
            raise httpx2.ConnectError(f"host {host!r} was not cleared by the target guard")
        pace = self._pace if host not in self._contacted else None
        last_error: Exception | None = None
        for address in addresses:
            if pace is not None:  # before each try: an address that does not answer may take the whole timeout
                await pace.dialling(host)  # (raises PaceRefused: not contacted)
            self.dialled.append((address, port))
            try:
                sock = await self._inner.connect_tcp(address, port, timeout)
            except (httpx2.ConnectError, httpx2.ConnectTimeout) as exc:
                last_error = exc
                continue
            if pace is not None:  # connected: held again for the TLS handshake and the first write
                try:
                    await pace.dialling(host)
                except BaseException:  # (PaceRefused, or cancelled: the connection is not used)
                    sock.close()
                    raise
                self._contacted.add(host)
            return sock
        assert last_error is not None
        raise last_error


@functools.lru_cache(maxsize=8)
def build_ssl_context(ca_bundle: str | None = None) -> ssl.SSLContext:
    """TLS client context: system roots, plus the PEM file ``ca_bundle`` when given.

    Certificate and host name verification are always on (``CERT_REQUIRED``). Loading the
    system roots costs milliseconds, so contexts are built once per bundle and shared (an
    ``SSLContext`` is safe to share between connections).
    """
    context = ssl.create_default_context()
    if ca_bundle:
        context.load_verify_locations(cafile=ca_bundle)
    context.set_alpn_protocols(["http/1.1"])
    return context


@functools.cache
def _no_trust_context() -> ssl.SSLContext:
    """A verifying context that trusts nothing: for plain-http targets, where TLS is never used."""
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


#: Connections open at once at most, for all hosts (our politeness limit; a warm one counts).
MAX_CONNECTIONS = 2
#: Seconds an idle connection is kept for the next request.
KEEPALIVE_S = 5.0


class PinnedTransport:
    """The pin table's backend under an HTTP/1.1 pool of at most two connections."""

    def __init__(self, backend: PinnedBackend, ssl_context: ssl.SSLContext, connect_timeout_s: float) -> None:
        self._backend = backend
        self._ssl_context = ssl_context
        self._connect_timeout_s = connect_timeout_s
        self._pool = ConnectionPool(self._open, max_connections=MAX_CONNECTIONS, keepalive_s=KEEPALIVE_S)

    async def request(
        self,
        method: str,
        url: httpx2.URL,
        headers: Mapping[str, str],
        content: bytes | None = None,
        *,
        read_timeout: float | None = None,
        pool_timeout: float | None = None,
        written: Written | None = None,
    ) -> Response:
        """Send one request and return once the final response's head arrived.

        ``read_timeout``: seconds between two reads (the head's and the body's); ``written``:
        told once the request is on the wire, or that a step before failed.

        Raises:
            httpx2.HTTPError: connecting, writing or reading the head failed (see :mod:`app.net.h1`).
        """
        head = request_head(method, url.raw_path, url.netloc, headers, content)
        origin: Origin = (url.scheme, url.raw_host.decode("ascii"), url.port or _default_port(url.scheme))
        try:
            connection = await self._pool.acquire(origin, pool_timeout)
            try:
                connection.send(head + content if content else head)
            except Exception:
                self._pool.release(connection, False, origin)
                raise
        except Exception:
            if written is not None:
                await written(False)
            raise
        if written is not None:
            await written(True)
        try:
            status, fields = await connection.receive_head(read_timeout)
        except BaseException:
            self._pool.release(connection, connection.finished(), origin)
            raise
        release = functools.partial(self._pool.release, origin=origin)
        return Response(status, Fields(fields), connection, release, read_timeout)

    async def _open(self, origin: Origin) -> Connection:
        scheme, host, port = origin
        tls = (self._ssl_context, host) if scheme == "https" else None
        return await self._backend.connect(host, port, tls, self._connect_timeout_s)

    def preconnect(self, url: httpx2.URL) -> bool:
        """Open one more connection to ``url``'s origin ahead of need, unless that would make three."""
        open_now = self._pool.open_count
        if open_now >= MAX_CONNECTIONS:
            return False
        port = url.port or _default_port(url.scheme)
        host = url.raw_host.decode("ascii")  # (IDNA), as it was pinned
        tls = (self._ssl_context, host) if url.scheme == "https" else None
        return self._backend.preconnect(
            host, port, tls=tls, timeout=self._connect_timeout_s,
            after_next=open_now == 0, room=lambda: self._pool.open_count < MAX_CONNECTIONS,
        )  # fmt: skip

    def warm_died(self) -> bool:
        """Whether a connection dialled ahead was dropped by the server before it answered (told once)."""
        return self._backend.warm.take_death()

    async def aclose(self) -> None:
        """Close every connection, and those dialled ahead."""
        await self._pool.aclose()
        await self._backend.settle()

    async def __aenter__(self) -> PinnedTransport:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc_value: BaseException | None = None,
        traceback: TracebackType | None = None,
    ) -> None:
        await self.aclose()


def _default_port(scheme: str) -> int:
    return 443 if scheme == "https" else 80


def build_transport(
    backend: PinnedBackend, *, ca_bundle: str | None, tls: bool = True, connect_timeout_s: float = 5.0
) -> PinnedTransport:
    """The transport of one probe or fetch, dialling only through ``backend``.

    Args:
        backend: the pin table.
        ca_bundle: optional extra trusted CAs (PEM path).
        tls: ``False`` for a plain-http target (development switch only): no trust store is loaded.
        connect_timeout_s: budget of each connection's TCP connect and TLS handshake.
    """
    context = build_ssl_context(ca_bundle) if tls else _no_trust_context()
    return PinnedTransport(backend, context, connect_timeout_s)
