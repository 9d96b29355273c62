"""The probe against servers that send a header field on several lines (RFC 9110 sections 5.2-5.3):
a singleton whose lines agree is that value, one whose lines disagree is said, a list is combined."""

from __future__ import annotations

import json
import socket

import pytest

from app.probe import probe
from app.settings import Settings
from tests.servers.raw import RawServer, Request, send, send_json
from tests.servers.raw_mcp import MiniMcp

pytestmark = pytest.mark.anyio

TWICE = [("Mcp-Session-Id", "sess-1"), ("Mcp-Session-Id", "sess-1")]


async def test_session_id_on_two_lines_with_one_value_is_that_session(raw: RawServer, dev_settings: Settings) -> None:
    raw.routes["/mcp"] = MiniMcp(issue_session="sess-1", require_session=True, initialize_lines=TWICE)
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason) == ("ok", "ok"), result.detail
    assert result.session is not None and result.session.issued
    assert result.tools is not None and result.tools.count == 2
    seen = raw.requests_to("/mcp")
    later = seen[[r.message.get("method") for r in seen].index("initialize") + 1 :]
    assert later and all(r.headers.get("mcp-session-id") == "sess-1" for r in later)
    assert "session_id_invalid" not in result.warnings


async def test_session_id_on_two_lines_with_different_values_is_session_id_conflict(
    raw: RawServer, dev_settings: Settings
) -> None:
    lines = [("Mcp-Session-Id", "sess-1"), ("Mcp-Session-Id", "sess-2")]
    raw.routes["/mcp"] = MiniMcp(require_session=True, initialize_lines=lines)
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason, result.failed_step) == ("server_error", "session_id_conflict", "initialize")
    assert not any(r.message.get("method") == "tools/list" for r in raw.requests_to("/mcp"))


@pytest.mark.parametrize("reply", ["json", "sse"])
async def test_content_type_on_two_lines_with_one_value_is_that_type(
    raw: RawServer, dev_settings: Settings, reply: str
) -> None:
    media = "application/json" if reply == "json" else "text/event-stream"
    raw.routes["/mcp"] = MiniMcp(reply=reply, initialize_lines=[("Content-Type", media)] * 2)  # type: ignore[arg-type]
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason) == ("ok", "ok")
    assert "content_type_conflict" not in result.warnings


async def test_content_type_on_two_lines_with_different_values_is_sniffed_and_said(
    raw: RawServer, dev_settings: Settings
) -> None:
    lines = [("Content-Type", "text/html"), ("Content-Type", "application/json")]
    raw.routes["/mcp"] = MiniMcp(initialize_lines=lines)
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason) == ("ok", "ok")
    assert "content_type_conflict" in result.warnings


async def test_protocol_version_header_on_two_lines_with_different_values_is_said(
    raw: RawServer, dev_settings: Settings
) -> None:
    lines = [("MCP-Protocol-Version", "2025-11-25"), ("MCP-Protocol-Version", "2025-06-18")]
    raw.routes["/mcp"] = MiniMcp(initialize_lines=lines)
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.protocol_version) == ("ok", "2025-11-25")
    assert "protocol_version_conflict" in result.warnings


@pytest.mark.parametrize(("second", "framed"), [("same", True), ("different", False)])
async def test_content_length_on_two_lines(raw: RawServer, dev_settings: Settings, second: str, framed: bool) -> None:
    """RFC 9112 section 6.3 rule 5: identical lines are that length, different ones a framing error."""
    mini = MiniMcp()

    @raw.route("/mcp")
    def answer(request: Request, conn: socket.socket) -> None:
        message = request.message
        if message.get("method") != "initialize":
            mini(request, conn)
            return
        result = mini._result("initialize")
        body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
        other = len(body) if second == "same" else len(body) + 5
        lines = [("Content-Length", str(len(body))), ("Content-Length", str(other))]
        send(conn, 200, {"content-type": "application/json"}, body, repeated=lines)

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    if framed:
        assert (result.status, result.reason) == ("ok", "ok")
    else:
        assert (result.status, result.reason, result.failed_step) == ("not_mcp", "invalid_http", "initialize")


@pytest.mark.parametrize(("second", "location"), [("/mcp/", "/mcp/"), ("/elsewhere", None)])
async def test_location_on_two_lines(raw: RawServer, dev_settings: Settings, second: str, location: str | None) -> None:
    @raw.route("/mcp")
    def redirect(request: Request, conn: socket.socket) -> None:
        send(conn, 307, repeated=[("Location", raw.url("/mcp/")), ("Location", raw.url(second))])

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason) == ("redirect", "redirect")
    assert result.location == (raw.url(location) if location else None)
    assert ("location_conflict" in result.warnings) is (location is None)


@pytest.mark.parametrize(("second", "hint"), [("120", 120), ("60", None)])
async def test_retry_after_on_two_lines(raw: RawServer, dev_settings: Settings, second: str, hint: int | None) -> None:
    @raw.route("/mcp")
    def limited(request: Request, conn: socket.socket) -> None:
        send_json(conn, 429, {"error": "slow down"}, repeated=[("Retry-After", "120"), ("Retry-After", second)])

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason, result.retry_after) == ("client_error", "rate_limited", hint)
    assert ("retry_after_conflict" in result.warnings) is (hint is None)


async def test_retry_after_http_date_on_two_identical_lines_is_that_date(
    raw: RawServer, dev_settings: Settings
) -> None:
    date = "Fri, 31 Dec 2100 23:59:59 GMT"  # far ahead: the hint is capped, never None

    @raw.route("/mcp")
    def limited(request: Request, conn: socket.socket) -> None:
        send_json(conn, 429, {"error": "slow down"}, repeated=[("Retry-After", date), ("Retry-After", date)])

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert result.reason == "rate_limited" and result.retry_after is not None and result.retry_after > 0


async def test_www_authenticate_on_two_lines_is_one_list_of_challenges(raw: RawServer, dev_settings: Settings) -> None:
    metadata = raw.url("/.well-known/oauth-protected-resource/mcp")

    @raw.route("/mcp")
    def protected(request: Request, conn: socket.socket) -> None:
        lines = [
            ("WWW-Authenticate", 'Basic realm="a, b"'),
            ("WWW-Authenticate", f'Bearer resource_metadata="{metadata}"'),
        ]
        send_json(conn, 401, {}, repeated=lines)

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason) == ("auth", "auth_required")
    assert result.auth is not None and result.auth.challenge is not None
    assert (result.auth.challenge.scheme or "").lower() == "bearer"
    assert any(lookup.url == metadata for lookup in result.auth.lookups)
    assert raw.requests_to("/.well-known/oauth-protected-resource/mcp")
