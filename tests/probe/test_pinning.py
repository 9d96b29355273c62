"""The probe dials only the addresses the guard checked, and keeps the host name for Host and SNI."""

from __future__ import annotations

import ipaddress
import socket
import ssl
from collections.abc import Iterable, Iterator
from pathlib import Path

import httpcore2
import pytest
import trustme

from app.errors import TargetRefused
from app.guard import IPAddress, ResolutionFailed
from app.probe import probe
from app.settings import Settings
from tests.servers.raw import RawServer, Request, send

pytestmark = pytest.mark.anyio

PUBLIC = ipaddress.ip_address("93.184.215.14")
LOOPBACK = ipaddress.ip_address("127.0.0.1")


class RebindingResolver:
    """Answers a public address to the first query and loopback to every later one."""

    def __init__(self) -> None:
        self.queries: list[str] = []

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        self.queries.append(host)
        return [PUBLIC] if len(self.queries) == 1 else [LOOPBACK]


class FixedResolver:
    def __init__(self, answers: dict[str, list[IPAddress]]) -> None:
        self.answers = answers
        self.queries: list[str] = []

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        self.queries.append(host)
        return self.answers[host]


class LoopbackOnlyBackend(httpcore2.AnyIOBackend):
    """A real socket backend that records every dial and opens sockets to loopback only.

    A dial to any other address fails at once without sending a packet (this test suite never
    sends traffic off the machine), as a refused connection would.
    """

    def __init__(self) -> None:
        self.dialled: list[tuple[str, int]] = []

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore2's interface)
        local_address: str | None = None,
        socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        self.dialled.append((host, port))
        if not ipaddress.ip_address(host).is_loopback:
            raise httpcore2.ConnectError("refused by the test backend: not a loopback address")
        return await super().connect_tcp(host, port, timeout, local_address, socket_options)


async def test_dns_rebinding_never_reaches_loopback() -> None:
    resolver = RebindingResolver()
    backend = LoopbackOnlyBackend()
    result = await probe(
        "https://rebind.example.com/mcp", settings=Settings(), resolver=resolver, network_backend=backend
    )
    assert resolver.queries == ["rebind.example.com"]  # one lookup, no second one at connect time
    assert backend.dialled and all(host == str(PUBLIC) for host, _port in backend.dialled)
    assert result.addresses == [str(PUBLIC)]
    assert result.status == "unreachable"
    # A later probe sees the loopback answer and is refused before any connection.
    with pytest.raises(TargetRefused) as refused:
        await probe("https://rebind.example.com/mcp", settings=Settings(), resolver=resolver, network_backend=backend)
    assert refused.value.reason == "address_not_public"
    assert all(host == str(PUBLIC) for host, _port in backend.dialled)


async def test_mixed_public_and_private_answer_is_refused_before_connecting() -> None:
    resolver = FixedResolver({"mixed.example.com": [PUBLIC, ipaddress.ip_address("10.0.0.7")]})
    backend = LoopbackOnlyBackend()
    with pytest.raises(TargetRefused) as refused:
        await probe("https://mixed.example.com/mcp", settings=Settings(), resolver=resolver, network_backend=backend)
    assert refused.value.reason == "address_not_public"
    assert backend.dialled == []


async def test_dns_failure_is_a_dns_result() -> None:
    class NoSuchHost:
        async def resolve(self, host: str, port: int) -> list[IPAddress]:
            raise ResolutionFailed("dns_nxdomain", "no such host")

    result = await probe("https://missing.example.com/mcp", settings=Settings(), resolver=NoSuchHost())
    assert (result.status, result.reason, result.failed_step) == ("dns", "dns_nxdomain", "dns")
    assert result.timings.dns_ms is not None


@pytest.fixture
def tls_raw(tmp_path: Path) -> Iterator[tuple[RawServer, Path]]:
    ca = trustme.CA()
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("mcp.test").configure_cert(server_context)
    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    server = RawServer(ssl_context=server_context)
    server.start()
    try:
        yield server, bundle
    finally:
        server.stop()


async def test_tls_sni_and_host_stay_the_host_name(tls_raw: tuple[RawServer, Path]) -> None:
    server, bundle = tls_raw

    @server.route("/mcp")
    def not_here(request: Request, conn: socket.socket) -> None:
        send(conn, 404)

    settings = Settings(allow_private=True, ca_bundle=str(bundle))
    resolver = FixedResolver({"mcp.test": [LOOPBACK]})
    result = await probe(server.url("/mcp", host="mcp.test"), settings=settings, resolver=resolver)
    assert (result.status, result.http_status) == ("not_found", 404)  # TLS verified for mcp.test
    assert set(server.server_names) == {"mcp.test"}
    assert {r.headers["host"] for r in server.seen} == {f"mcp.test:{server.port}"}
    assert resolver.queries == ["mcp.test"]


async def test_untrusted_certificate_is_tls(tls_raw: tuple[RawServer, Path]) -> None:
    server, _bundle = tls_raw
    resolver = FixedResolver({"mcp.test": [LOOPBACK]})
    result = await probe(server.url("/mcp", host="mcp.test"), settings=Settings(allow_private=True), resolver=resolver)
    assert (result.status, result.reason) == ("tls", "unknown_issuer")
    assert server.seen == []


async def test_hostname_mismatch_is_tls(tls_raw: tuple[RawServer, Path]) -> None:
    server, bundle = tls_raw
    resolver = FixedResolver({"other.test": [LOOPBACK]})
    settings = Settings(allow_private=True, ca_bundle=str(bundle))
    result = await probe(server.url("/mcp", host="other.test"), settings=settings, resolver=resolver)
    assert (result.status, result.reason) == ("tls", "hostname_mismatch")


def test_probe_settings_default_is_production() -> None:
    assert Settings().allow_private is False
