"""The probe dials only the addresses the guard checked, and keeps the host name for Host and SNI."""

from __future__ import annotations

import ipaddress
import socket
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest
import trustme

from app.errors import TargetRefused
from app.guard import IPAddress, ResolutionFailed
from app.probe import probe
from app.settings import Settings
from tests.servers.network import PUBLIC, FixedResolver, LoopbackNat
from tests.servers.raw import RawServer, Request, send
from tests.servers.raw_mcp import MiniMcp

pytestmark = pytest.mark.anyio

LOOPBACK = ipaddress.ip_address("127.0.0.1")


class RebindingResolver:
    """Answers a public address to the first query and loopback to every later one."""

    def __init__(self) -> None:
        self.queries: list[str] = []

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        self.queries.append(host)
        return [PUBLIC] if len(self.queries) == 1 else [LOOPBACK]


async def test_dns_rebinding_never_reaches_loopback(public_tls: tuple[RawServer, Settings]) -> None:
    server, settings = public_tls
    server.routes["/mcp"] = MiniMcp(issue_session="s-1")
    resolver = RebindingResolver()
    network = LoopbackNat({(str(PUBLIC), 443): server.port})
    result = await probe("https://mcp.example.com/mcp", settings=settings, resolver=resolver, network_backend=network)
    assert result.status == "ok"  # several requests and connections, all to the checked address
    assert resolver.queries == ["mcp.example.com"]  # one lookup, no second one at connect time
    assert network.dialled and set(network.dialled) == {(str(PUBLIC), 443)}
    assert result.addresses == [str(PUBLIC)]
    # A later probe sees the loopback answer and is refused before any connection.
    dialled_before = len(network.dialled)
    with pytest.raises(TargetRefused) as refused:
        await probe("https://mcp.example.com/mcp", settings=settings, resolver=resolver, network_backend=network)
    assert refused.value.reason == "address_not_public"
    assert len(network.dialled) == dialled_before


async def test_mixed_public_and_private_answer_is_refused_before_connecting() -> None:
    resolver = FixedResolver({"mixed.example.com": [PUBLIC, ipaddress.ip_address("10.0.0.7")]})
    network = LoopbackNat({})
    with pytest.raises(TargetRefused) as refused:
        await probe("https://mixed.example.com/mcp", settings=Settings(), resolver=resolver, network_backend=network)
    assert refused.value.reason == "address_not_public"
    assert network.dialled == []


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
