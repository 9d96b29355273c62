"""An httpx2 transport that only ever dials addresses the guard already checked.

Policy: the probe resolves a host once (:mod:`app.guard.target`) and *pins* the answer here.
:class:`PinnedBackend` is an httpcore2 network backend whose ``connect_tcp`` looks the
request's host up in that pin table and dials the pinned address: it never resolves a name,
and a host that was not pinned cannot be reached at all. The URL keeps its host name, so the
``Host`` header and the TLS SNI / certificate name check stay the host name (RFC 9110
section 7.2, RFC 6066 section 3). The first connection to each host waits for the caller's
start turn (:mod:`app.net.pace`).

Requests go straight to the transport built by :func:`build_transport` (no client layer), so
no cookie is ever stored or sent, proxy environment variables are never read, redirects are
never followed, and only HTTP/1.1 is spoken.
"""

from __future__ import annotations

import functools
import socket
import ssl
from collections.abc import Callable, Iterable, Mapping
from types import TracebackType
from typing import Any

import httpcore2
import httpx2

from app.guard.addresses import IPAddress
from app.net.pace import Pace
from app.net.warm import WarmPool


class PinnedBackend(httpcore2.AsyncNetworkBackend):
    """Network backend that maps host names to pre-checked addresses.

    Args:
        pins: host (lower-case ASCII host name, or IP address text) -> addresses to dial, in
            order. Add hosts later with :meth:`pin` after they pass the guard.
        inner: the backend that opens the socket to an IP address (default: httpcore2's
            anyio backend). Tests may pass another real backend to observe the dialled address.
        pace: asked before the first connection to each host (:mod:`app.net.pace`).
    """

    def __init__(
        self,
        pins: Mapping[str, Iterable[IPAddress]] | None = None,
        inner: httpcore2.AsyncNetworkBackend | None = None,
        pace: Pace | None = None,
    ) -> None:
        self._pins: dict[str, tuple[str, ...]] = {}
        self._pace = pace
        self._contacted: set[str] = set()
        self._inner = inner or httpcore2.AnyIOBackend()
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

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore2's interface)
        local_address: str | None = None,
        socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        """A warm connection to ``host:port`` if one was dialled ahead; else dial the pinned addresses in order.

        Raises:
            httpcore2.ConnectError: the host was never pinned, or no address accepted.
            httpcore2.ConnectTimeout: the last address tried timed out.
        """
        key = (host.lower().strip("[]"), port)
        deferred = self._deferred.pop(key, None)
        warm = await self.warm.claim(key)
        stream = warm or await self._dial(key[0], port, timeout, local_address, socket_options)
        if deferred is not None:  # asked for before the first connection: dial it beside that one's TLS
            deferred()
        return stream

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
        socket_options: Any,
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

        async def dial() -> httpcore2.AsyncNetworkStream:
            return await self._dial(key[0], port, timeout, None, socket_options)

        if after_next:
            self._deferred[key] = lambda: room() and self.warm.start(key, dial, tls, timeout)
            return True
        return self.warm.start(key, dial, tls, timeout)

    async def _dial(
        self,
        host: str,
        port: int,
        timeout: float | None,  # noqa: ASYNC109 (httpcore2's interface)
        local_address: str | None,
        socket_options: Iterable[httpcore2.SOCKET_OPTION] | None,
    ) -> httpcore2.AsyncNetworkStream:
        addresses = self._pins.get(host)
        if not addresses:
            raise httpcore2.ConnectError(f"host {host!r} was not cleared by the target guard")
        pace = self._pace if host not in self._contacted else None
        last_error: Exception | None = None
        for address in addresses:
            if pace is not None:  # before each try: an address that does not answer may take the whole timeout
                await pace.dialling(host)  # (raises PaceRefused: not contacted)
            self.dialled.append((address, port))
            try:
                stream = await self._inner.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as exc:
                last_error = exc
                continue
            if pace is not None:  # connected: held again for the TLS handshake and the first write
                try:
                    await pace.dialling(host)
                except BaseException:  # (PaceRefused, or cancelled: the connection is not used)
                    await stream.aclose()
                    raise
                self._contacted.add(host)
            return stream
        assert last_error is not None
        raise last_error

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore2's interface)
        socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        """Unix sockets are never a probe target."""
        raise httpcore2.ConnectError("unix sockets are not probed")

    async def sleep(self, seconds: float) -> None:
        """Delegate to the inner backend."""
        await self._inner.sleep(seconds)


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


_SOCKET_OPTIONS = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
#: Connections to one host at most (our politeness limit; a warm one counts).
MAX_CONNECTIONS = 2


class PinnedTransport(httpx2.AsyncHTTPTransport):
    """The probe's transport: the pin table's backend under an HTTP/1.1 pool of at most two connections."""

    def __init__(self, backend: PinnedBackend, ssl_context: ssl.SSLContext, connect_timeout_s: float) -> None:
        super().__init__(verify=ssl_context, trust_env=False)
        self._backend = backend
        self._ssl_context = ssl_context
        self._connect_timeout_s = connect_timeout_s
        self._pool = httpcore2.AsyncConnectionPool(
            ssl_context=ssl_context,
            max_connections=MAX_CONNECTIONS,
            max_keepalive_connections=MAX_CONNECTIONS,
            keepalive_expiry=5.0,
            http1=True,
            http2=False,
            retries=0,
            socket_options=_SOCKET_OPTIONS,
            network_backend=backend,
        )

    def preconnect(self, url: httpx2.URL) -> bool:
        """Open one more connection to ``url``'s origin ahead of need, unless that would make three."""
        open_now = len(self._pool.connections)
        if open_now >= MAX_CONNECTIONS:
            return False
        port = url.port or (443 if url.scheme == "https" else 80)
        host = url.raw_host.decode("ascii")  # as httpcore2 dials it (IDNA), and as it was pinned
        tls = (self._ssl_context, host) if url.scheme == "https" else None
        return self._backend.preconnect(
            host, port, tls=tls, timeout=self._connect_timeout_s, socket_options=_SOCKET_OPTIONS,
            after_next=open_now == 0, room=lambda: len(self._pool.connections) < MAX_CONNECTIONS,
        )  # fmt: skip

    def warm_died(self) -> bool:
        """Whether a connection dialled ahead was dropped by the server before it answered (told once)."""
        return self._backend.warm.take_death()

    async def aclose(self) -> None:
        await super().aclose()
        await self._backend.settle()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc_value: BaseException | None = None,
        traceback: TracebackType | None = None,
    ) -> None:
        await super().__aexit__(exc_type, exc_value, traceback)
        await self._backend.settle()


def build_transport(
    backend: PinnedBackend, *, ca_bundle: str | None, tls: bool = True, connect_timeout_s: float = 5.0
) -> PinnedTransport:
    """The httpx2 transport of one probe, dialling only through ``backend``.

    The probe sends requests on the transport itself (:class:`app.probe.exchange.Exchanger`),
    not through an ``httpx2.AsyncClient``: there is no cookie jar, no redirect handling and no
    proxy lookup to switch off, because none of them exists on this path.

    Args:
        backend: the pin table.
        ca_bundle: optional extra trusted CAs (PEM path).
        tls: ``False`` for a plain-http target (development switch only): no trust store is loaded.
        connect_timeout_s: budget of a connection dialled ahead of need (see :mod:`app.net.warm`).
    """
    context = build_ssl_context(ca_bundle) if tls else _no_trust_context()
    return PinnedTransport(backend, context, connect_timeout_s)
