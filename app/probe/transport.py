"""An httpx2 transport that only ever dials addresses the guard already checked.

Policy: the probe resolves a host once (:mod:`app.guard.target`) and *pins* the answer here.
:class:`PinnedBackend` is an httpcore2 network backend whose ``connect_tcp`` looks the
request's host up in that pin table and dials the pinned address: it never resolves a name,
and a host that was not pinned cannot be reached at all. The URL keeps its host name, so the
``Host`` header and the TLS SNI / certificate name check stay the host name (RFC 9110
section 7.2, RFC 6066 section 3).

Requests go straight to the transport built by :func:`build_transport` (no client layer), so
no cookie is ever stored or sent, proxy environment variables are never read, redirects are
never followed, and only HTTP/1.1 is spoken.
"""

from __future__ import annotations

import functools
import socket
import ssl
from collections.abc import Iterable, Mapping

import httpcore2
import httpx2

from app.guard.addresses import IPAddress


class PinnedBackend(httpcore2.AsyncNetworkBackend):
    """Network backend that maps host names to pre-checked addresses.

    Args:
        pins: host (lower-case ASCII host name, or IP address text) -> addresses to dial, in
            order. Add hosts later with :meth:`pin` after they pass the guard.
        inner: the backend that opens the socket to an IP address (default: httpcore2's
            anyio backend). Tests may pass another real backend to observe the dialled address.
    """

    def __init__(
        self, pins: Mapping[str, Iterable[IPAddress]] | None = None, inner: httpcore2.AsyncNetworkBackend | None = None
    ) -> None:
        self._pins: dict[str, tuple[str, ...]] = {}
        self._inner = inner or httpcore2.AnyIOBackend()
        self.dialled: list[tuple[str, int]] = []
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
        """Dial the pinned addresses of ``host`` in order; the first that connects wins.

        Raises:
            httpcore2.ConnectError: the host was never pinned, or no address accepted.
            httpcore2.ConnectTimeout: the last address tried timed out.
        """
        addresses = self._pins.get(host.lower().strip("[]"))
        if not addresses:
            raise httpcore2.ConnectError(f"host {host!r} was not cleared by the target guard")
        last_error: Exception | None = None
        for address in addresses:
            self.dialled.append((address, port))
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as exc:
                last_error = exc
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


class _PinnedTransport(httpx2.AsyncHTTPTransport):
    def __init__(self, backend: PinnedBackend, ssl_context: ssl.SSLContext) -> None:
        super().__init__(verify=ssl_context, trust_env=False)
        self._pool = httpcore2.AsyncConnectionPool(
            ssl_context=ssl_context,
            max_connections=4,
            max_keepalive_connections=2,
            keepalive_expiry=5.0,
            http1=True,
            http2=False,
            retries=0,
            socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
            network_backend=backend,
        )


def build_transport(backend: PinnedBackend, *, ca_bundle: str | None, tls: bool = True) -> httpx2.AsyncHTTPTransport:
    """The httpx2 transport of one probe, dialling only through ``backend``.

    The probe sends requests on the transport itself (:class:`app.probe.exchange.Exchanger`),
    not through an ``httpx2.AsyncClient``: there is no cookie jar, no redirect handling and no
    proxy lookup to switch off, because none of them exists on this path.

    Args:
        backend: the pin table.
        ca_bundle: optional extra trusted CAs (PEM path).
        tls: ``False`` for a plain-http target (development switch only): no trust store is loaded.
    """
    return _PinnedTransport(backend, build_ssl_context(ca_bundle) if tls else _no_trust_context())
