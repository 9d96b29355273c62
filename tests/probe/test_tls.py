"""TLS facts for every https probe, and the tls status with its reasons (certificates from trustme)."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from pathlib import Path

import pytest
import trustme

from app.probe import ProbeResult, probe
from app.settings import Settings
from tests.servers.network import PUBLIC, FixedResolver, LoopbackNat, self_signed_context, server_context
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp

pytestmark = pytest.mark.anyio

NOW = datetime.datetime.now(datetime.UTC)


async def check(server: RawServer, settings: Settings, host: str = "mcp.example.com") -> ProbeResult:
    server.routes["/mcp"] = MiniMcp()
    resolver = FixedResolver({host: [PUBLIC]})
    nat = LoopbackNat({(str(PUBLIC), 443): server.port})
    return await probe(f"https://{host}/mcp", settings=settings, resolver=resolver, network_backend=nat)


@pytest.fixture
def make_server() -> Iterator[list[RawServer]]:
    servers: list[RawServer] = []
    yield servers
    for server in servers:
        server.stop()


def start(servers: list[RawServer], context: object) -> RawServer:
    server = RawServer(ssl_context=context)  # type: ignore[arg-type]
    server.start()
    servers.append(server)
    return server


async def test_valid_certificate_facts(public_tls: tuple[RawServer, Settings]) -> None:
    server, settings = public_tls
    result = await check(server, settings)
    assert result.status == "ok"
    assert result.tls is not None
    assert result.tls.verified is True
    assert result.tls.names == ["mcp.example.com"]
    assert result.tls.not_after is not None and result.tls.not_after > NOW
    assert result.tls.days_left is not None and result.tls.days_left > 300
    assert result.tls.issuer is not None and "trustme" in result.tls.issuer.lower()


async def test_expired_certificate(ca: tuple[trustme.CA, Path], make_server: list[RawServer]) -> None:
    authority, bundle = ca
    context = server_context(
        authority,
        "mcp.example.com",
        not_before=NOW - datetime.timedelta(days=60),
        not_after=NOW - datetime.timedelta(days=3),
    )
    result = await check(start(make_server, context), Settings(ca_bundle=str(bundle)))
    assert (result.status, result.reason) == ("tls", "cert_expired")
    assert result.tls is not None and result.tls.verified is False
    assert result.tls.days_left is not None and -5 <= result.tls.days_left <= -3
    assert result.tls.names == ["mcp.example.com"]


async def test_not_yet_valid_certificate(ca: tuple[trustme.CA, Path], make_server: list[RawServer]) -> None:
    authority, bundle = ca
    context = server_context(
        authority,
        "mcp.example.com",
        not_before=NOW + datetime.timedelta(days=2),
        not_after=NOW + datetime.timedelta(days=90),
    )
    result = await check(start(make_server, context), Settings(ca_bundle=str(bundle)))
    assert (result.status, result.reason) == ("tls", "cert_not_yet_valid")
    assert result.tls is not None and result.tls.not_before is not None and result.tls.not_before > NOW


async def test_wrong_host_name(ca: tuple[trustme.CA, Path], make_server: list[RawServer]) -> None:
    authority, bundle = ca
    server = start(make_server, server_context(authority, "other.example.org"))
    result = await check(server, Settings(ca_bundle=str(bundle)))
    assert (result.status, result.reason) == ("tls", "hostname_mismatch")
    assert result.tls is not None and result.tls.names == ["other.example.org"]
    assert server.seen == []  # no request was sent over the unverified connection


async def test_self_signed(tmp_path: Path, make_server: list[RawServer]) -> None:
    server = start(make_server, self_signed_context("mcp.example.com", tmp_path))
    result = await check(server, Settings())
    assert (result.status, result.reason) == ("tls", "self_signed")
    assert result.tls is not None and result.tls.subject == "mcp.example.com" == result.tls.issuer


async def test_unknown_issuer(ca: tuple[trustme.CA, Path], make_server: list[RawServer]) -> None:
    authority, _bundle = ca
    result = await check(start(make_server, server_context(authority, "mcp.example.com")), Settings())
    assert (result.status, result.reason) == ("tls", "unknown_issuer")
    assert result.tls is not None and result.tls.verified is False and result.tls.names == ["mcp.example.com"]


async def test_plain_http_has_no_tls_facts(raw: RawServer, dev_settings: Settings) -> None:
    raw.routes["/mcp"] = MiniMcp()
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert result.status == "ok" and result.tls is None


def test_certificate_dates_python_cannot_hold(tmp_path: Path) -> None:
    from app.probe.tls import certificate_facts
    from tests.servers.network import self_signed_der

    der = self_signed_der("mcp.example.com", tmp_path, not_after_year=2100)
    patched = der.replace(b"21000101000000Z", b"00000101000000Z")
    assert patched != der
    facts = certificate_facts(patched, verified=False)
    assert facts.not_after is None and facts.days_left is None
    assert facts.names == ["mcp.example.com"] and facts.not_before is not None
