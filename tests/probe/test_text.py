"""Making server text safe (:mod:`app.probe.text`): unsafe characters and lone surrogates."""

from __future__ import annotations

import json
import socket

import pytest

from app.probe import probe
from app.probe.text import clean_text
from app.settings import Settings
from tests.servers.raw import RawServer, Request, send, send_json
from tests.servers.raw_mcp import MiniMcp

pytestmark = pytest.mark.anyio


async def test_lone_surrogate_in_server_text_is_removed(raw: RawServer, dev_settings: Settings) -> None:
    @raw.route("/mcp")
    def surrogate(request: Request, conn: socket.socket) -> None:
        message = request.message
        if message.get("method") == "initialize":
            body = (
                b'{"jsonrpc":"2.0","id":%d,"result":{"protocolVersion":"2025-11-25","capabilities":{},'
                % (message["id"])
            )
            body += b'"serverInfo":{"name":"\\ud800evil\\u2028x","version":"1\\udfff"}}}'
            send(conn, 200, {"content-type": "application/json"}, body)
            return
        MiniMcp()(request, conn)

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert result.server is not None and result.server.name == "evilx" and result.server.version == "1"
    json.loads(result.model_dump_json())  # serialisable


def test_clean_text_drops_unsafe_categories() -> None:
    assert clean_text("a\u2028b\u2029c\ud800d\ue000e\U000e0001f") == "abcdef"
    assert clean_text("x" + "\u0301" * 50) == "x\u0301\u0301"
    assert clean_text("\x1b[31mred\x9b\u202eevil") == "[31mredevil"


async def test_json_error_body_with_surrogate_detail(raw: RawServer, dev_settings: Settings) -> None:
    @raw.route("/mcp")
    def error(request: Request, conn: socket.socket) -> None:
        send_json(
            conn,
            200,
            {"jsonrpc": "2.0", "id": request.message.get("id"), "error": {"code": -32603, "message": "\ud800boom"}},
        )

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert result.detail == "boom"
