"""Auth results: the challenge, and the protected resource metadata lookup (RFC 9728)."""

from __future__ import annotations

import ipaddress
import json
import socket
import time

import anyio
import pytest

from app.guard import IPAddress
from app.probe import probe
from app.probe.challenge import parse_www_authenticate
from app.settings import Settings
from tests.servers.network import PUBLIC, FixedResolver, LoopbackNat
from tests.servers.raw import RawServer, Request, send, send_json

pytestmark = pytest.mark.anyio

WELL_KNOWN = "/.well-known/oauth-protected-resource"


def challenge_route(raw: RawServer, header: str | None, status: int = 401) -> None:
    @raw.route("/mcp")
    def protected(request: Request, conn: socket.socket) -> None:
        headers = {"content-type": "application/json"}
        if header is not None:
            headers["www-authenticate"] = header
        body = json.dumps({"error": "invalid_token", "error_description": "Missing Authorization header"})
        send(conn, status, headers, body.encode())


def metadata_route(raw: RawServer, path: str, resource: str) -> None:
    document = {"resource": resource, "authorization_servers": ["https://auth.example.com"], "scopes_supported": ["a"]}

    @raw.route(path)
    def metadata(request: Request, conn: socket.socket) -> None:
        send_json(conn, 200, document)


async def test_metadata_at_the_challenge_url(raw: RawServer, dev_settings: Settings) -> None:
    challenge_route(raw, f'Bearer error="invalid_token", resource_metadata="{raw.url("/custom/prm.json")}"')
    metadata_route(raw, "/custom/prm.json", raw.url("/mcp"))
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason) == ("auth", "auth_required")
    assert result.auth is not None and result.auth.challenge is not None
    assert result.auth.challenge.error == "invalid_token"
    assert result.auth.metadata_published is True
    assert result.auth.metadata is not None
    assert result.auth.metadata.url == raw.url("/custom/prm.json")
    assert result.auth.metadata.resource_matches is True
    assert result.auth.metadata.authorization_servers == ["https://auth.example.com"]
    assert result.auth.metadata.scopes_supported == ["a"]
    assert [lookup.url for lookup in result.auth.lookups] == [raw.url("/custom/prm.json")]


async def test_metadata_at_the_path_suffixed_well_known(raw: RawServer, dev_settings: Settings) -> None:
    challenge_route(raw, 'Bearer realm="mcp"')
    metadata_route(raw, WELL_KNOWN + "/mcp", raw.url("/mcp"))
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert result.auth is not None and result.auth.metadata is not None
    assert result.auth.metadata.url == raw.url(WELL_KNOWN + "/mcp")
    assert result.auth.challenge is not None and result.auth.challenge.realm == "mcp"
    assert raw.requests_to(WELL_KNOWN) == []  # stopped at the first document


async def test_metadata_at_the_root_well_known(raw: RawServer, dev_settings: Settings) -> None:
    challenge_route(raw, "Bearer")
    metadata_route(raw, WELL_KNOWN, raw.url("/").rstrip("/"))
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert result.auth is not None and result.auth.metadata is not None
    assert [(lookup.url, lookup.http_status) for lookup in result.auth.lookups] == [
        (raw.url(WELL_KNOWN + "/mcp"), 404),
        (raw.url(WELL_KNOWN), 200),
    ]
    assert result.auth.metadata.resource_matches is False  # the resource is the origin, not the URL


async def test_no_metadata_anywhere(raw: RawServer, dev_settings: Settings) -> None:
    challenge_route(raw, 'Bearer realm="x"')
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert result.auth is not None
    assert (result.auth.metadata_published, result.auth.metadata) == (False, None)
    assert [lookup.http_status for lookup in result.auth.lookups] == [404, 404]


async def test_metadata_behind_an_html_200(raw: RawServer, dev_settings: Settings) -> None:
    challenge_route(raw, "Bearer")
    for path in (WELL_KNOWN + "/mcp", WELL_KNOWN):

        @raw.route(path)
        def spa(request: Request, conn: socket.socket) -> None:
            send(conn, 200, {"content-type": "text/html"}, b"<!doctype html><html>app shell</html>")

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert result.auth is not None and result.auth.metadata_published is False
    assert [lookup.http_status for lookup in result.auth.lookups] == [200, 200]


async def test_401_without_challenge_still_looks_up_metadata(raw: RawServer, dev_settings: Settings) -> None:
    challenge_route(raw, None)
    metadata_route(raw, WELL_KNOWN + "/mcp", raw.url("/mcp"))
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason) == ("auth", "auth_challenge_missing")
    assert result.auth is not None and result.auth.challenge is None and result.auth.metadata_published


async def test_403_insufficient_scope(raw: RawServer, dev_settings: Settings) -> None:
    challenge_route(raw, 'Bearer error="insufficient_scope", scope="files:read files:write"', status=403)
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason) == ("auth", "auth_insufficient")
    assert result.auth is not None and result.auth.challenge is not None
    assert result.auth.challenge.scope == "files:read files:write"


@pytest.mark.parametrize(
    ("metadata_url", "refused"),
    [
        ("https://169.254.169.254/latest/meta-data/", "host_ip_literal"),
        ("https://internal.example.com/prm", "address_not_public"),
        ("https://localhost/prm", "host_not_public_name"),
        ("http://mcp.example.com/prm", "scheme_not_https"),
        ("https://mcp.example.com:8443/prm", "port_not_allowed"),
    ],
)
async def test_metadata_url_to_a_private_place_is_refused_not_fetched(
    public_tls: tuple[RawServer, Settings], metadata_url: str, refused: str
) -> None:
    server, settings = public_tls
    challenge_route(server, f'Bearer resource_metadata="{metadata_url}"')
    resolver = FixedResolver({"mcp.example.com": [PUBLIC], "internal.example.com": [ipaddress.ip_address("10.1.2.3")]})
    nat = LoopbackNat({(str(PUBLIC), 443): server.port})
    result = await probe("https://mcp.example.com/mcp", settings=settings, resolver=resolver, network_backend=nat)
    assert (result.status, result.reason) == ("auth", "auth_required")
    assert result.auth is not None
    first = result.auth.lookups[0]
    assert (first.url, first.refused, first.http_status) == (metadata_url, refused, None)
    # The well-known URLs on the probed origin are still tried, and nothing else was dialled.
    assert [lookup.url for lookup in result.auth.lookups[1:]] == [
        "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
        "https://mcp.example.com/.well-known/oauth-protected-resource",
    ]
    assert set(nat.dialled) == {(str(PUBLIC), 443)}
    assert resolver.queries.count("mcp.example.com") == 1
    assert result.tls is not None and result.tls.verified is True


def test_parse_challenges() -> None:
    parsed = parse_www_authenticate(
        'Basic realm="legacy", Bearer realm="mcp", error="invalid_token", '
        'error_description="The \\"token\\" expired", scope="a b", resource_metadata=https://x.example/prm'
    )
    assert (parsed.scheme, parsed.realm, parsed.error, parsed.scope) == ("Bearer", "mcp", "invalid_token", "a b")
    assert parsed.error_description == 'The "token" expired'
    assert parsed.resource_metadata == "https://x.example/prm"
    assert parse_www_authenticate("Negotiate abc123==").scheme == "Negotiate"
    assert parse_www_authenticate("").scheme is None
    long = parse_www_authenticate("Bearer realm=" + "x" * 10_000)
    assert len(long.raw) <= 2048
    assert "\x1b" not in parse_www_authenticate('Bearer realm="\x1b[31mred"').raw


async def test_metadata_resource_that_is_not_a_url(raw: RawServer, dev_settings: Settings) -> None:
    @raw.route("/mcp")
    def protected(request: Request, conn: socket.socket) -> None:
        send(conn, 401, {"www-authenticate": "Bearer"})

    @raw.route("/.well-known/oauth-protected-resource/mcp")
    def metadata(request: Request, conn: socket.socket) -> None:
        send_json(conn, 200, {"resource": "https://[oops", "authorization_servers": ["https://as.example.com"]})

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert result.auth is not None and result.auth.metadata is not None
    assert result.auth.metadata.resource_matches is False


async def test_metadata_host_lookup_is_bounded_by_the_deadline(raw: RawServer) -> None:
    class SlowForMetadata:
        async def resolve(self, host: str, port: int) -> list[IPAddress]:
            if host == "slow.example.net":
                await anyio.sleep(30)
            return [ipaddress.ip_address("127.0.0.1")]

    @raw.route("/mcp")
    def late_401(request: Request, conn: socket.socket) -> None:
        send(conn, 401, {"www-authenticate": 'Bearer resource_metadata="http://slow.example.net/prm"'})

    settings = Settings(allow_private=True, probe_timeout_s=3.0, step_timeout_s=2.0, session_end_timeout_s=0.5)
    started = time.monotonic()
    result = await probe(raw.url("/mcp"), settings=settings, resolver=SlowForMetadata())
    assert time.monotonic() - started < 3.5
    assert result.auth is not None and result.auth.lookups[0].failed == "probe_deadline"


async def test_resource_metadata_is_judged_as_sent_not_as_cleaned(raw: RawServer, dev_settings: Settings) -> None:
    @raw.route("/mcp")
    def protected(request: Request, conn: socket.socket) -> bool:
        value = f'Bearer resource_metadata="{raw.url("/pr")}\u202em"'.encode()
        conn.sendall(b"HTTP/1.1 401 X\r\ncontent-length: 0\r\nwww-authenticate: " + value + b"\r\n\r\n")
        return False

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert result.auth is not None
    assert result.auth.lookups[0].refused == "url_malformed"
    assert raw.requests_to("/prm") == []
