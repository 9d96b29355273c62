"""One request and its reply (:mod:`app.probe.exchange`): reading and sniffing the body."""

from __future__ import annotations

import socket

import pytest

from app.probe import probe
from app.settings import Settings
from tests.servers.raw import RawServer, Request

pytestmark = pytest.mark.anyio


async def test_whitespace_body_in_one_byte_chunks(raw: RawServer, dev_settings: Settings) -> None:
    @raw.route("/mcp")
    def spaces(request: Request, conn: socket.socket) -> bool:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n")
        conn.sendall(b"1\r\n \r\n" * 20_000 + b"0\r\n\r\n")
        return True

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason) == ("not_mcp", "empty_reply")  # blanks only: an empty body
