"""The probe against scripted raw servers: odd framings and every HTTP status it must classify."""

from __future__ import annotations

import json
import socket
import time

import pytest

from app.probe import probe
from app.settings import Settings
from tests.servers.raw import RawServer, Request, send, send_json
from tests.servers.raw_mcp import MiniMcp

pytestmark = pytest.mark.anyio


async def test_accept_header_names_both_types(raw: RawServer, dev_settings: Settings) -> None:
    raw.routes["/mcp"] = MiniMcp(require_accept_both=True)
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert result.status == "ok"
    for request in raw.requests_to("/mcp"):
        if request.method == "POST":
            assert request.headers["accept"] == "application/json, text/event-stream"


async def test_406_is_accept_rejected(raw: RawServer, dev_settings: Settings) -> None:
    @raw.route("/mcp")
    def always_406(request: Request, conn: socket.socket) -> None:
        error = {"code": -32000, "message": "Not Acceptable: Client must accept both"}
        send_json(conn, 406, {"jsonrpc": "2.0", "id": None, "error": error})

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason, result.http_status) == ("client_error", "accept_rejected", 406)
    assert result.detail == "Not Acceptable: Client must accept both"


async def test_307_to_trailing_slash(raw: RawServer, dev_settings: Settings) -> None:
    @raw.route("/mcp")
    def redirect(request: Request, conn: socket.socket) -> None:
        send(conn, 307, {"location": raw.url("/mcp/")})

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason, result.http_status) == ("redirect", "redirect", 307)
    assert result.location == raw.url("/mcp/")
    assert raw.requests_to("/mcp/") == []  # never followed


async def test_html_200_is_not_mcp(raw: RawServer, dev_settings: Settings) -> None:
    @raw.route("/mcp")
    def html(request: Request, conn: socket.socket) -> None:
        send(conn, 200, {"content-type": "text/html"}, b"<!doctype html><html><title>Hi</title></html>")

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason, result.http_status) == ("not_mcp", "html_page", 200)


async def test_html_200_without_content_type_is_sniffed(raw: RawServer, dev_settings: Settings) -> None:
    @raw.route("/mcp")
    def html(request: Request, conn: socket.socket) -> None:
        send(conn, 200, {}, b"  <html><body>landing page</body></html>")

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason) == ("not_mcp", "html_page")


async def test_json_without_content_type_is_sniffed(raw: RawServer, dev_settings: Settings) -> None:
    @raw.route("/plain")
    def plain(request: Request, conn: socket.socket) -> None:
        # Every reply is labelled text/plain although it is JSON.
        message = request.message
        if "id" not in message:
            send(conn, 202)
            return
        result: dict[str, object] = {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "p"}}
        if message.get("method") == "tools/list":
            result = {"tools": [{"name": "t"}]}
        body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
        send(conn, 200, {"content-type": "text/plain"}, body)

    result = await probe(raw.url("/plain"), settings=dev_settings)
    assert result.status == "ok"
    assert result.protocol_version == "2025-06-18"
    assert result.tools is not None and result.tools.names == ["t"]


async def test_404(raw: RawServer, dev_settings: Settings) -> None:
    result = await probe(raw.url("/nope"), settings=dev_settings)
    assert (result.status, result.reason, result.http_status) == ("not_found", "http_not_found", 404)


async def test_500_html(raw: RawServer, dev_settings: Settings) -> None:
    @raw.route("/mcp")
    def boom(request: Request, conn: socket.socket) -> None:
        send(conn, 500, {"content-type": "text/html"}, b"<html><h1>Internal Server Error</h1></html>")

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason, result.http_status) == ("server_error", "http_server_error", 500)


@pytest.mark.parametrize(("retry_after", "expected"), [("120", 120), ("Wed, 21 Oct 2015 07:28:00 GMT", 0), ("x", None)])
async def test_429_with_retry_after(
    raw: RawServer, dev_settings: Settings, retry_after: str, expected: int | None
) -> None:
    @raw.route("/mcp")
    def limited(request: Request, conn: socket.socket) -> None:
        send(conn, 429, {"retry-after": retry_after, "content-type": "text/plain"}, b"slow down")

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason, result.http_status) == ("client_error", "rate_limited", 429)
    assert result.retry_after == expected


async def test_429_with_future_http_date(raw: RawServer, dev_settings: Settings) -> None:
    when = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 90))

    @raw.route("/mcp")
    def limited(request: Request, conn: socket.socket) -> None:
        send(conn, 429, {"retry-after": when})

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert result.retry_after is not None and 85 <= result.retry_after <= 91


@pytest.mark.parametrize("line_end", ["\r\n", "\n", "\r"])
async def test_priming_event_and_line_endings(raw: RawServer, dev_settings: Settings, line_end: str) -> None:
    raw.routes["/mcp"] = MiniMcp(reply="sse", line_end=line_end, priming=True)
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert result.status == "ok", result.reason
    assert result.server is not None and result.server.name == "mini"
    assert result.tools is not None and result.tools.names == ["alpha", "beta"]


async def test_notifications_and_server_requests_before_the_response(raw: RawServer, dev_settings: Settings) -> None:
    raw.routes["/mcp"] = MiniMcp(reply="sse", notifications_before=3, server_request_before=True)
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert result.status == "ok"
    assert result.tools is not None and result.tools.count == 2


async def test_session_id_is_kept_and_sent(raw: RawServer, dev_settings: Settings) -> None:
    raw.routes["/mcp"] = MiniMcp(issue_session="sess-42", require_session=True)
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert result.status == "ok"
    assert result.session is not None and (result.session.issued, result.session.end_status) == (True, 200)
    after_init = [r for r in raw.requests_to("/mcp") if r.message.get("method") != "initialize"][1:]
    assert after_init, "expected requests after initialize"
    for request in after_init:
        assert request.headers.get("mcp-session-id") == "sess-42"
        assert request.headers.get("mcp-protocol-version") == "2025-11-25"
    deletes = [r for r in raw.requests_to("/mcp") if r.method == "DELETE"]
    assert len(deletes) == 1 and deletes[0].headers["mcp-session-id"] == "sess-42"


async def test_session_required_but_never_issued(raw: RawServer, dev_settings: Settings) -> None:
    raw.routes["/mcp"] = MiniMcp(issue_session=None, require_session=True)
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason) == ("client_error", "session_required")
    assert result.failed_step == "tools/list"
    assert result.server is not None and result.server.name == "mini"  # what was learned is kept
    assert "initialized_rejected" in result.warnings


async def test_modern_raw_server(raw: RawServer, dev_settings: Settings) -> None:
    raw.routes["/mcp"] = MiniMcp(discover="modern", reply="sse", priming=True)
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.era, result.protocol_version) == ("ok", "modern", "2026-07-28")
    discover = raw.requests_to("/mcp")[0]
    assert discover.headers["mcp-protocol-version"] == "2026-07-28"
    assert discover.headers["mcp-method"] == "server/discover"
    meta = discover.message["params"]["_meta"]
    assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert meta["io.modelcontextprotocol/clientInfo"]["name"] == "mcp-sonde"
    assert "io.modelcontextprotocol/clientCapabilities" in meta
    tools = raw.requests_to("/mcp")[1]
    assert tools.headers["mcp-method"] == "tools/list"
    assert not any(r.method == "DELETE" for r in raw.requests_to("/mcp"))


async def test_request_headers_are_minimal(raw: RawServer, dev_settings: Settings) -> None:
    raw.routes["/mcp"] = MiniMcp(issue_session="s1")
    await probe(raw.url("/mcp"), settings=dev_settings)
    for request in raw.requests_to("/mcp"):
        assert "origin" not in request.headers
        assert "cookie" not in request.headers
        assert "authorization" not in request.headers
        assert request.headers["accept-encoding"] == "identity"
        assert request.headers["user-agent"].startswith("mcp-sonde/")
    initialize = next(r for r in raw.requests_to("/mcp") if r.message.get("method") == "initialize")
    assert "mcp-protocol-version" not in initialize.headers
    params = initialize.message["params"]
    assert params["protocolVersion"] == "2025-11-25"
    assert params["clientInfo"]["name"] == "mcp-sonde" and params["clientInfo"]["version"]


async def test_cookies_are_never_sent_back(raw: RawServer, dev_settings: Settings) -> None:
    inner = MiniMcp()

    @raw.route("/mcp")
    def cookie_monster(request: Request, conn: socket.socket) -> None:
        if request.message.get("method") == "initialize":
            body = (
                b'{"jsonrpc":"2.0","id":%d,"result":{"protocolVersion":"2025-11-25","capabilities":{}}}'
                % (request.message["id"])
            )
            send(conn, 200, {"content-type": "application/json", "set-cookie": "sid=secret; Path=/"}, body)
            return
        inner(request, conn)

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert result.status == "ok"
    assert all("cookie" not in r.headers for r in raw.requests_to("/mcp"))


async def test_jsonrpc_error_to_initialize_is_not_not_mcp(raw: RawServer, dev_settings: Settings) -> None:
    @raw.route("/mcp")
    def refuse(request: Request, conn: socket.socket) -> None:
        message = request.message
        error = {"code": -32603, "message": "database down"}
        send_json(conn, 200, {"jsonrpc": "2.0", "id": message.get("id"), "error": error})

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason, result.detail) == ("server_error", "jsonrpc_error", "database down")


async def test_retry_once_after_connection_dropped_before_response(raw: RawServer, dev_settings: Settings) -> None:
    inner = MiniMcp()
    drops = {"left": 1}

    @raw.route("/mcp")
    def flaky(request: Request, conn: socket.socket) -> bool | None:
        if drops["left"] > 0:
            drops["left"] -= 1
            return True  # close without a byte of response
        return inner(request, conn)

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert result.status == "ok"
    assert len([r for r in raw.requests_to("/mcp") if r.message.get("method") == "server/discover"]) == 2


async def test_connection_dropped_twice_is_unreachable(raw: RawServer, dev_settings: Settings) -> None:
    @raw.route("/mcp")
    def always_drop(request: Request, conn: socket.socket) -> bool:
        return True

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason) == ("unreachable", "connection_closed")
    assert len(raw.requests_to("/mcp")) == 2  # the first try and one retry, no more


async def test_refused_port_is_unreachable(dev_settings: Settings) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    result = await probe(f"http://127.0.0.1:{port}/mcp", settings=dev_settings)
    assert (result.status, result.reason, result.failed_step) == (
        "unreachable",
        "connection_refused",
        "server/discover",
    )
