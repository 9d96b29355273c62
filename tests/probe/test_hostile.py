"""Hostile and odd servers: oversize replies, bombs, endless streams, broken tool lists."""

from __future__ import annotations

import json
import socket
import time
import tracemalloc
import zlib
from typing import Any

import pytest

from app.probe import probe
from app.settings import Settings
from tests.servers.raw import RawServer, Request, response_bytes, send, send_json
from tests.servers.raw_mcp import MiniMcp

pytestmark = pytest.mark.anyio


def mcp_with_tools_page(pages: Any) -> MiniMcp:
    """A MiniMcp whose ``tools/list`` result comes from ``pages(cursor)``."""

    class Paged(MiniMcp):
        def __call__(self, request: Request, conn: socket.socket) -> bool | None:
            message = request.message
            if message.get("method") == "tools/list":
                cursor = (message.get("params") or {}).get("cursor")
                send_json(conn, 200, {"jsonrpc": "2.0", "id": message["id"], "result": pages(cursor)})
                return None
            return super().__call__(request, conn)

    return Paged()


async def test_tools_reply_larger_than_the_cap_keeps_what_it_can(raw: RawServer, dev_settings: Settings) -> None:
    many = [{"name": f"tool_{i}", "description": "d" * 300} for i in range(3000)]  # about 1 MB
    raw.routes["/mcp"] = mcp_with_tools_page(lambda cursor: {"tools": many})
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert result.status == "ok"
    assert result.tools is not None and result.tools.truncated is True
    assert 500 < result.tools.count < 3000
    assert result.tools.names[:3] == ["tool_0", "tool_1", "tool_2"] and len(result.tools.names) == 100
    assert "reply_truncated" in result.warnings


async def test_handshake_reply_larger_than_the_cap(raw: RawServer, dev_settings: Settings) -> None:
    @raw.route("/mcp")
    def huge(request: Request, conn: socket.socket) -> None:
        result = {"protocolVersion": "2025-11-25", "capabilities": {}, "instructions": "x" * 400_000}
        send_json(conn, 200, {"jsonrpc": "2.0", "id": request.message.get("id"), "result": result})

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason) == ("not_mcp", "reply_too_large")


def _gzip_route(raw: RawServer, padding: int) -> None:
    @raw.route("/mcp")
    def gzipped(request: Request, conn: socket.socket) -> None:
        message = request.message
        if "id" not in message:
            send(conn, 202)
            return
        result: dict[str, Any] = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "gz"}}
        if message.get("method") == "tools/list":
            result = {"tools": [{"name": "zipped"}]}
        body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
        headers = {"content-type": "application/json", "content-encoding": "gzip"}
        send(conn, 200, headers, _gzip_padded(body, padding))


def _gzip_padded(body: bytes, padding: int) -> bytes:
    """gzip of ``body`` followed by ``padding`` blanks, compressed a megabyte at a time (small memory)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = [packer.compress(body)]
    blanks = b" " * 1_000_000
    for offset in range(0, padding, len(blanks)):
        parts.append(packer.compress(blanks[: min(len(blanks), padding - offset)]))
    parts.append(packer.flush())
    return b"".join(parts)


async def test_gzip_although_identity_was_asked(raw: RawServer, dev_settings: Settings) -> None:
    _gzip_route(raw, padding=0)
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert result.status == "ok" and result.tools is not None and result.tools.names == ["zipped"]
    assert all(r.headers.get("accept-encoding") == "identity" for r in raw.seen)


async def test_gzip_bomb_is_cut_at_the_cap(raw: RawServer, dev_settings: Settings) -> None:
    _gzip_route(raw, padding=50_000_000)  # 50 MB of blanks, about 50 kB compressed
    tracemalloc.start()
    try:
        result = await probe(raw.url("/mcp"), settings=dev_settings)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # The response is complete at the start of the body; the padding after it (legal JSON
    # whitespace) is read up to the cap and no further, and said.
    assert (result.status, result.reason) == ("ok", "ok") and "reply_truncated" in result.warnings
    assert peak < 16 * 1024 * 1024


async def test_event_stream_that_never_sends_the_response(raw: RawServer) -> None:
    @raw.route("/mcp")
    def chatter(request: Request, conn: socket.socket) -> bool:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n")
        for _ in range(100):
            conn.sendall(b': still here\n\nevent: message\ndata: {"jsonrpc":"2.0","method":"x"}\n\n')
            time.sleep(0.1)
        return True

    settings = Settings(allow_private=True, probe_timeout_s=4.0, step_timeout_s=1.0, session_end_timeout_s=0.5)
    started = time.monotonic()
    result = await probe(raw.url("/mcp"), settings=settings)
    assert time.monotonic() - started < 4.5
    assert (result.status, result.reason) == ("timeout", "read_timeout")


async def test_event_stream_that_answers_and_never_closes(raw: RawServer, dev_settings: Settings) -> None:
    inner = MiniMcp()

    @raw.route("/mcp")
    def lingering(request: Request, conn: socket.socket) -> bool | None:
        message = request.message
        if "id" not in message:
            return inner(request, conn)
        payload = {"jsonrpc": "2.0", "id": message["id"], "result": inner._result(message.get("method"))}
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n")
        conn.sendall(f"event: message\ndata: {json.dumps(payload)}\n\n".encode())
        time.sleep(5)  # never closes in time
        return True

    started = time.monotonic()
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert time.monotonic() - started < 2.0
    assert result.status == "ok" and result.tools is not None and result.tools.count == 2


async def test_300_tools_with_100_kb_on_one_sse_data_line(raw: RawServer, dev_settings: Settings) -> None:
    inner = MiniMcp()

    @raw.route("/mcp")
    def wide(request: Request, conn: socket.socket) -> bool | None:
        message = request.message
        if message.get("method") != "tools/list":
            return inner(request, conn)
        tools = [{"name": f"t{i:03d}", "description": "w" * 330} for i in range(300)]
        line = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": tools}})
        assert len(line) > 100_000
        conn.sendall(response_bytes(200, {"content-type": "text/event-stream"}, f"data: {line}\n\n".encode()))
        return None

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert result.status == "ok"
    assert result.tools is not None and (result.tools.count, len(result.tools.names)) == (300, 100)
    assert result.tools.names[-1] == "t099"


async def test_cursor_that_never_advances(raw: RawServer, dev_settings: Settings) -> None:
    raw.routes["/mcp"] = mcp_with_tools_page(lambda cursor: {"tools": [{"name": "same"}], "nextCursor": "again"})
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert result.status == "ok"
    assert result.tools is not None
    assert (result.tools.pages_read, result.tools.cursor_repeated, result.tools.more_pages) == (2, True, False)
    assert "cursor_repeated" in result.warnings


@pytest.mark.parametrize(
    ("page", "count", "invalid", "warning"),
    [
        ({}, 0, 0, "tools_missing"),
        ({"tools": None}, 0, 0, "tools_missing"),
        (
            {"tools": [None, {"name": "ok"}, {"title": "no name"}, 7, {"name": ""}, {"name": 5}]},
            1,
            5,
            "invalid_tool_entries",
        ),
    ],
)
async def test_broken_tool_lists(
    raw: RawServer, dev_settings: Settings, page: dict[str, Any], count: int, invalid: int, warning: str
) -> None:
    raw.routes["/mcp"] = mcp_with_tools_page(lambda cursor: page)
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert result.status == "ok"
    assert result.tools is not None and (result.tools.count, result.tools.invalid_entries) == (count, invalid)
    assert warning in result.warnings


async def test_308_to_another_host_is_not_followed(raw: RawServer, dev_settings: Settings) -> None:
    @raw.route("/mcp")
    def moved(request: Request, conn: socket.socket) -> None:
        send(conn, 308, {"location": "https://elsewhere.example.net/mcp"})

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.http_status, result.location) == (
        "redirect",
        308,
        "https://elsewhere.example.net/mcp",
    )
    assert len(raw.seen) == 2  # server/discover and initialize, both answered 308; nothing followed


async def test_huge_headers(raw: RawServer, dev_settings: Settings) -> None:
    @raw.route("/mcp")
    def headers(request: Request, conn: socket.socket) -> bool:
        conn.sendall(b"HTTP/1.1 200 OK\r\n" + b"x-junk: " + b"a" * 200_000 + b"\r\n\r\n")
        return True

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert result.status in ("not_mcp", "unreachable")
