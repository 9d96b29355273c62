"""Each HTTP answer a public directory meets maps to the documented status and reason."""

from __future__ import annotations

import socket

import pytest

from app.probe import probe
from app.settings import Settings
from tests.servers.raw import RawServer, Request, send, send_json

pytestmark = pytest.mark.anyio

CF_CHALLENGE = b"<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>cf-chl</body></html>"

CASES = [
    pytest.param(401, {"www-authenticate": 'Bearer realm="mcp"'}, b"", "auth", "auth_required", id="401-challenge"),
    pytest.param(401, {}, b"", "auth", "auth_challenge_missing", id="401-no-challenge"),
    pytest.param(
        403, {"www-authenticate": 'Bearer error="insufficient_scope"'}, b"", "auth", "auth_insufficient", id="403-scope"
    ),
    pytest.param(
        403,
        {"content-type": "text/plain"},
        b"Invalid Origin header",
        "client_error",
        "origin_rejected",
        id="403-origin",
    ),
    pytest.param(403, {"content-type": "text/html"}, CF_CHALLENGE, "client_error", "waf_challenge", id="403-waf-page"),
    pytest.param(403, {"cf-mitigated": "challenge"}, b"", "client_error", "waf_challenge", id="403-waf-header"),
    pytest.param(403, {}, b"nope", "client_error", "forbidden", id="403-plain"),
    pytest.param(402, {}, b"", "client_error", "payment_required", id="402"),
    pytest.param(405, {"allow": "GET"}, b"", "client_error", "method_not_allowed", id="405"),
    pytest.param(
        421, {"content-type": "text/plain"}, b"Invalid Host header", "client_error", "host_rejected", id="421"
    ),
    pytest.param(418, {}, b"", "client_error", "http_client_error", id="418"),
    pytest.param(429, {"retry-after": "7"}, b"", "client_error", "rate_limited", id="429"),
    pytest.param(503, {"content-type": "text/html"}, CF_CHALLENGE, "client_error", "waf_challenge", id="503-waf"),
    pytest.param(
        502, {"content-type": "text/html"}, b"<html>Bad gateway</html>", "server_error", "http_server_error", id="502"
    ),
    pytest.param(
        501,
        {"content-type": "text/html"},
        b"<html>Unsupported method</html>",
        "not_mcp",
        "http_not_implemented",
        id="501",
    ),
    pytest.param(301, {"location": "https://elsewhere.example.com/mcp"}, b"", "redirect", "redirect", id="301"),
    pytest.param(200, {"content-type": "application/json"}, b"{not json", "not_mcp", "invalid_json", id="bad-json"),
    pytest.param(
        200,
        {"content-type": "application/json"},
        b'{"hello": "world"}',
        "not_mcp",
        "not_jsonrpc",
        id="json-not-jsonrpc",
    ),
    pytest.param(200, {}, b"", "not_mcp", "empty_reply", id="empty-200"),
    pytest.param(200, {"content-type": "text/plain"}, b"OK", "not_mcp", "unexpected_content", id="text-200"),
    pytest.param(
        200,
        {"content-type": "text/event-stream"},
        b": only a comment\n\n",
        "not_mcp",
        "no_response_in_stream",
        id="sse-no-response",
    ),
    pytest.param(200, {"content-encoding": "br"}, b"\x1b\x00", "not_mcp", "unsupported_encoding", id="brotli"),
    pytest.param(
        200,
        {"content-type": "application/json"},
        b"[" * 100_000 + b"]" * 100_000,
        "not_mcp",
        "invalid_json",
        id="deep-nesting",
    ),
]


@pytest.mark.parametrize(("status", "headers", "body", "expected_status", "reason"), CASES)
async def test_answer_maps_to_reason(
    raw: RawServer,
    dev_settings: Settings,
    status: int,
    headers: dict[str, str],
    body: bytes,
    expected_status: str,
    reason: str,
) -> None:
    @raw.route("/mcp")
    def answer(request: Request, conn: socket.socket) -> None:
        send(conn, status, headers, body)

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason) == (expected_status, reason)
    if expected_status == "auth" or reason in ("rate_limited", "waf_challenge"):
        # Credentials wanted, rate limited or a firewall page: no second request.
        assert len(raw.requests_to("/mcp")) == 1


async def test_modern_server_with_only_unknown_versions(raw: RawServer, dev_settings: Settings) -> None:
    @raw.route("/mcp")
    def future(request: Request, conn: socket.socket) -> None:
        data = {"supported": ["2099-01-01"], "requested": "2026-07-28"}
        error = {"code": -32022, "message": "Unsupported protocol version", "data": data}
        send_json(conn, 400, {"jsonrpc": "2.0", "id": request.message.get("id"), "error": error})

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason) == ("client_error", "unsupported_protocol_version")
    assert result.detail == "2099-01-01"
    assert len(raw.requests_to("/mcp")) == 1  # no initialize attempted


async def test_modern_only_server_that_refuses_both(raw: RawServer, dev_settings: Settings) -> None:
    @raw.route("/mcp")
    def picky(request: Request, conn: socket.socket) -> None:
        message = request.message
        if message.get("method") == "server/discover":
            error = {"code": -32020, "message": "mcp-method header does not match"}
            send_json(conn, 400, {"jsonrpc": "2.0", "id": message.get("id"), "error": error})
            return
        error = {"code": -32601, "message": "Method not found"}
        send_json(conn, 404, {"jsonrpc": "2.0", "id": message.get("id"), "error": error})

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason, result.failed_step) == ("client_error", "modern_only", "initialize")


async def test_modern_error_listing_a_handshake_version_falls_back(raw: RawServer, dev_settings: Settings) -> None:
    from tests.servers.raw_mcp import MiniMcp

    inner = MiniMcp()

    @raw.route("/mcp")
    def old_and_new(request: Request, conn: socket.socket) -> None:
        if request.message.get("method") == "server/discover":
            data = {"supported": ["2025-11-25"], "requested": "2026-07-28"}
            error = {"code": -32022, "message": "Unsupported protocol version", "data": data}
            send_json(conn, 400, {"jsonrpc": "2.0", "id": request.message.get("id"), "error": error})
            return
        inner(request, conn)

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.era) == ("ok", "legacy")
