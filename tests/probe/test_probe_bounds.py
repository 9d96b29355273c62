"""Every wait is bounded: slow or silent servers end in a timeout within the budget."""

from __future__ import annotations

import socket
import time

import pytest

from app.probe import probe
from app.settings import Settings
from tests.servers.raw import RawServer, Request, response_bytes
from tests.servers.raw_mcp import MiniMcp

pytestmark = pytest.mark.anyio


@pytest.fixture
def quick() -> Settings:
    return Settings(allow_private=True, probe_timeout_s=4.0, step_timeout_s=1.0, session_end_timeout_s=0.5)


async def test_headers_that_never_come(raw: RawServer, quick: Settings) -> None:
    @raw.route("/mcp")
    def silent(request: Request, conn: socket.socket) -> None:
        time.sleep(6)

    started = time.monotonic()
    result = await probe(raw.url("/mcp"), settings=quick)
    assert time.monotonic() - started < 4.5
    assert (result.status, result.reason, result.failed_step) == ("timeout", "read_timeout", "server/discover")


async def test_body_that_trickles(raw: RawServer, quick: Settings) -> None:
    @raw.route("/mcp")
    def trickle(request: Request, conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n")
        for _ in range(10):
            conn.sendall(b" ")
            time.sleep(0.3)

    started = time.monotonic()
    result = await probe(raw.url("/mcp"), settings=quick)
    assert time.monotonic() - started < 4.5
    assert (result.status, result.reason) == ("timeout", "read_timeout")


async def test_budget_runs_out_after_handshake_keeps_what_was_learned(raw: RawServer, quick: Settings) -> None:
    inner = MiniMcp()

    @raw.route("/mcp")
    def slow_tools(request: Request, conn: socket.socket) -> None:
        if request.message.get("method") == "tools/list":
            time.sleep(0.9)
        inner(request, conn)

    settings = quick.model_copy(update={"tools_max_pages": 50})
    inner.tools = ["t"]
    result = await probe(raw.url("/mcp"), settings=settings)
    assert result.status == "ok"  # one page, fast enough
    # Now a server whose every page points to another page, each slow: the budget ends it.
    page = {"n": 0}

    @raw.route("/endless")
    def endless(request: Request, conn: socket.socket) -> None:
        message = request.message
        if message.get("method") != "tools/list":
            inner(request, conn)
            return
        page["n"] += 1
        time.sleep(0.4)
        body = b'{"jsonrpc":"2.0","id":%d,"result":{"tools":[{"name":"t%d"}],"nextCursor":"c%d"}}' % (
            message["id"],
            page["n"],
            page["n"],
        )
        conn.sendall(response_bytes(200, {"content-type": "application/json"}, body))

    started = time.monotonic()
    result = await probe(raw.url("/endless"), settings=settings)
    assert time.monotonic() - started < 4.5
    assert (result.status, result.reason, result.failed_step) == ("timeout", "probe_deadline", "tools/list")
    assert result.server is not None and result.server.name == "mini"
    assert result.protocol_version == "2025-11-25"
    assert result.tools is not None and result.tools.count >= 3
    assert result.session is not None and result.session.issued is False
