"""The legacy HTTP+SSE transport: a real SDK server and scripted ones."""

from __future__ import annotations

import json
import socket
import time

import pytest

from app.probe import probe
from app.probe.legacy_sse import resolve_endpoint, same_origin
from app.settings import Settings
from tests.servers.raw import RawServer, Request, send
from tests.servers.raw_sse import MiniSse

pytestmark = pytest.mark.anyio


async def test_sdk_sse_server(sdk_base: str, dev_settings: Settings) -> None:
    result = await probe(f"{sdk_base}/legacy-sse/sse", settings=dev_settings)
    assert (result.status, result.era, result.transport) == ("ok", "legacy", "sse")
    assert result.server is not None and result.server.name == "legacy-sse"
    assert result.tools is not None and result.tools.names == ["add", "echo", "now"]
    assert result.session is None
    assert result.timings.sse_connect_ms is not None


async def test_light_probe_over_sse(sdk_base: str, dev_settings: Settings) -> None:
    result = await probe(f"{sdk_base}/legacy-sse/sse", light=True, settings=dev_settings)
    assert (result.status, result.transport, result.tools) == ("ok", "sse", None)


@pytest.mark.parametrize(
    "endpoint",
    ["/messages?sessionId=abc", "messages?sessionId=abc", "?sessionId=abc", "ABSOLUTE"],
    ids=["root-relative", "relative", "query-only", "absolute-same-origin"],
)
async def test_endpoint_forms(raw: RawServer, sse: MiniSse, dev_settings: Settings, endpoint: str) -> None:
    sse.endpoint = raw.url("/messages?sessionId=abc") if endpoint == "ABSOLUTE" else endpoint
    if endpoint == "?sessionId=abc":
        # The stream URL itself takes the messages, when they carry the session query.
        raw.routes["/sse"] = lambda request, conn: (
            sse.message(request, conn) if "sessionId" in request.path else sse.stream(request, conn)
        )
    result = await probe(raw.url("/sse"), settings=dev_settings)
    assert (result.status, result.transport, result.protocol_version) == ("ok", "sse", "2024-11-05")
    assert result.server is not None and result.server.name == "mini-sse"
    assert result.tools is not None and result.tools.names == ["one", "two"]
    posted = [r for r in raw.seen if r.method == "POST" and "sessionId=abc" in r.path]
    methods = [r.message.get("method") for r in posted]
    assert methods == ["initialize", "notifications/initialized", "tools/list", "tools/call"]


@pytest.mark.parametrize(
    "endpoint",
    [
        "http://other.example.com/messages",
        "http://127.0.0.2:{port}/messages",
        "http://localhost:{port}/messages",
        "//evil.example.net/m",
    ],
)
async def test_endpoint_on_another_origin_is_never_contacted(
    raw: RawServer, sse: MiniSse, dev_settings: Settings, endpoint: str
) -> None:
    sse.endpoint = endpoint.format(port=raw.port)
    result = await probe(raw.url("/sse"), settings=dev_settings)
    assert (result.status, result.reason) == ("client_error", "sse_endpoint_cross_origin")
    assert result.detail is not None and "messages" not in result.detail
    assert not any(r.path.startswith("/messages") for r in raw.seen)


async def test_stream_without_endpoint_event(raw: RawServer, sse: MiniSse, dev_settings: Settings) -> None:
    sse.endpoint = None
    sse.close_after_endpoint = True
    result = await probe(raw.url("/sse"), settings=dev_settings)
    assert (result.status, result.reason) == ("not_mcp", "sse_endpoint_missing")


async def test_endpoint_never_sent_is_bounded(raw: RawServer, sse: MiniSse) -> None:
    sse.endpoint = None
    settings = Settings(allow_private=True, probe_timeout_s=3.0, step_timeout_s=2.0, session_end_timeout_s=0.5)
    started = time.monotonic()
    result = await probe(raw.url("/sse"), settings=settings)
    assert time.monotonic() - started < 3.5
    assert (result.status, result.reason) == ("timeout", "probe_deadline")


async def test_post_accepted_but_never_answered(raw: RawServer, sse: MiniSse) -> None:
    sse.answer = False
    settings = Settings(allow_private=True, probe_timeout_s=6.0, step_timeout_s=1.0, session_end_timeout_s=0.5)
    started = time.monotonic()
    result = await probe(raw.url("/sse"), settings=settings)
    assert time.monotonic() - started < 3.0
    assert (result.status, result.reason, result.failed_step) == ("timeout", "read_timeout", "initialize")
    # what was learned before the timeout is kept: the stream and its endpoint settled the transport
    assert (result.transport, result.era) == ("sse", "legacy")


async def test_sse_url_that_speaks_streamable_http(sdk_base: str, dev_settings: Settings, raw: RawServer) -> None:
    # A URL ending in /sse is no proof of the old transport: decide by what the server does.
    from tests.servers.raw_mcp import MiniMcp

    raw.routes["/sse"] = MiniMcp()
    result = await probe(raw.url("/sse"), settings=dev_settings)
    assert (result.status, result.transport) == ("ok", "streamable_http")


async def test_post_404_then_get_html_keeps_the_post_verdict(raw: RawServer, dev_settings: Settings) -> None:
    @raw.route("/mcp")
    def page(request: Request, conn: socket.socket) -> None:
        if request.method == "GET":
            send(conn, 200, {"content-type": "text/html"}, b"<html>hello</html>")
        else:
            send(conn, 404)

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason) == ("not_found", "http_not_found")


def test_resolve_endpoint_and_origin() -> None:
    base = "https://mcp.example.com/v1/sse"
    assert resolve_endpoint(base, " /messages?x=1 ") == "https://mcp.example.com/messages?x=1"
    assert resolve_endpoint(base, "messages") == "https://mcp.example.com/v1/messages"
    assert resolve_endpoint(base, "?s=1") == "https://mcp.example.com/v1/sse?s=1"
    assert same_origin("https://mcp.example.com/a", "https://MCP.example.com:443/b")
    assert not same_origin("https://mcp.example.com/a", "http://mcp.example.com/a")
    assert not same_origin("https://mcp.example.com/a", "https://mcp.example.com:8443/a")
    assert not same_origin("https://mcp.example.com/a", "https://mcp.example.com.evil.net/a")


async def test_a_202_whose_body_stalls_is_not_waited_for(raw: RawServer, sse: MiniSse, dev_settings: Settings) -> None:
    def stalling_message(request: Request, conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 202 Accepted\r\ncontent-type: text/plain\r\ncontent-length: 100\r\n\r\nAccepted")
        message = request.message
        if "id" in message and sse.streams:
            result: dict[str, object] = {
                "protocolVersion": "2024-11-05",
                "capabilities": {},
                "serverInfo": {"name": "s", "version": "1"},
            }
            if message.get("method") != "initialize":
                result = {"tools": [{"name": "one", "inputSchema": {"type": "object"}}]}
            sse.streams[-1].put({"jsonrpc": "2.0", "id": message["id"], "result": result})
        time.sleep(5)

    raw.routes["/messages"] = stalling_message
    started = time.monotonic()
    result = await probe(raw.url("/sse"), settings=dev_settings)
    assert (result.status, result.transport, result.tools and result.tools.count) == ("ok", "sse", 1)
    assert time.monotonic() - started < 4.0


async def test_deep_schemas_and_a_flood_of_foreign_ids_on_the_stream(
    raw: RawServer, sse: MiniSse, dev_settings: Settings
) -> None:
    deep: dict[str, object] = {"type": "string"}
    for _ in range(40):
        deep = {"type": "object", "properties": {"x": deep}}
    sse.tools = ["one", {"name": "deep", "inputSchema": deep}]
    original = sse.message

    def crowded(request: Request, conn: socket.socket) -> None:
        if request.message.get("method") == "initialize" and sse.streams:
            for i in range(200):  # responses to requests never made, before ours
                sse.streams[-1].put({"jsonrpc": "2.0", "id": f"x{i}", "result": {}})
                sse.streams[-1].put({"jsonrpc": "2.0", "id": 1000 + i, "result": {}})
        original(request, conn)

    raw.routes["/messages"] = crowded
    result = await probe(raw.url("/sse"), settings=dev_settings)
    assert (result.status, result.tools and result.tools.names) == ("ok", ["one", "deep"])


@pytest.mark.parametrize("bad_id", ["[1]", '{"a": 1}', "true"])
async def test_sse_response_with_unusable_id(raw: RawServer, dev_settings: Settings, bad_id: str) -> None:
    from tests.servers.raw_sse import MiniSse

    sse = MiniSse()
    sse.install(raw)

    @raw.route("/messages")
    def message(request: Request, conn: socket.socket) -> None:
        send(conn, 202)
        if sse.streams:
            sse.streams[-1].put(json.loads(f'{{"jsonrpc": "2.0", "id": {bad_id}, "result": {{}}}}'))

    settings = dev_settings.model_copy(update={"step_timeout_s": 1.0})
    try:
        result = await probe(raw.url("/sse"), settings=settings)
    finally:
        sse.stop()
    assert (result.status, result.reason, result.failed_step) == ("timeout", "read_timeout", "initialize")
