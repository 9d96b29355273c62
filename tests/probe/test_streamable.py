"""The conversation (:mod:`app.probe.streamable`): the legacy SSE endpoint it is given."""

from __future__ import annotations

import socket
import time

import pytest

from app.probe import probe
from app.settings import Settings
from tests.servers.raw import RawServer, Request, send

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    "endpoint",
    [b"http://[oops/messages", b"//[x]/messages", b"/messages\x01x", b"/messages?" + b"a" * 70_000],
    ids=["bad-ipv6", "bad-host", "control-char", "too-long"],
)
async def test_sse_endpoint_that_is_not_a_url(raw: RawServer, dev_settings: Settings, endpoint: bytes) -> None:
    @raw.route("/sse")
    def stream(request: Request, conn: socket.socket) -> bool:
        if request.method != "GET":
            send(conn, 405)
            return False
        conn.sendall(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\nevent: endpoint\ndata: " + endpoint + b"\n\n"
        )
        time.sleep(1)
        return True

    result = await probe(raw.url("/sse"), settings=dev_settings)
    assert (result.status, result.reason) == ("not_mcp", "sse_endpoint_invalid")
