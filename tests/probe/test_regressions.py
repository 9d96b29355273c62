"""Regression tests, one per fault found by attacking the probe with hostile servers."""

from __future__ import annotations

import ipaddress
import json
import socket
import subprocess
import sys

import pytest

from app.guard import IPAddress, classify
from app.probe import probe
from app.probe.classify import retry_after_seconds
from app.probe.text import clean_text
from app.settings import Settings
from tests.servers.raw import RawServer, Request, send, send_json
from tests.servers.raw_mcp import MiniMcp

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    "value",
    [
        "²",
        "١٢",
        "9" * 5000,
        "Mon, 01 Jan 2020 00:00:00 +99999999999999999999",
        "01 Jan 99999999999999999999 00:00:00 GMT",
    ],
)
def test_retry_after_hostile_values_give_none(value: str) -> None:
    assert retry_after_seconds(value) is None


async def test_retry_after_non_ascii_digit_does_not_crash_the_probe(raw: RawServer, dev_settings: Settings) -> None:
    @raw.route("/mcp")
    def limited(request: Request, conn: socket.socket) -> bool:
        conn.sendall(b"HTTP/1.1 429 X\r\ncontent-length: 0\r\nretry-after: \xb2\r\n\r\n")
        return False

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason, result.retry_after) == ("client_error", "rate_limited", None)


def _initialize_answer(server_info: dict[str, str], version: str = "2025-11-25") -> MiniMcp:
    class Answer(MiniMcp):
        def _result(self, method: object) -> dict[str, object]:
            result = super()._result(method)
            if method == "initialize":
                result = {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": server_info}
            return result

    return Answer()


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


def test_lone_surrogate_does_not_crash_the_cli(raw: RawServer) -> None:
    @raw.route("/mcp")
    def surrogate(request: Request, conn: socket.socket) -> None:
        message = request.message
        if message.get("method") == "tools/list":
            body = b'{"jsonrpc":"2.0","id":%d,"result":{"tools":[{"name":"\\ud800t"}]}}' % message["id"]
            send(conn, 200, {"content-type": "application/json"}, body)
            return
        MiniMcp()(request, conn)

    for extra in ([], ["--json"]):
        completed = subprocess.run(
            [sys.executable, "-m", "app", "check", raw.url("/mcp"), "--allow-private", *extra],
            capture_output=True,
            timeout=60,
            check=False,
        )
        assert completed.returncode == 0, completed.stderr
        assert b"Traceback" not in completed.stderr


def test_clean_text_drops_unsafe_categories() -> None:
    assert clean_text("a\u2028b\u2029c\ud800d\ue000e\U000e0001f") == "abcdef"
    assert clean_text("x" + "\u0301" * 50) == "x\u0301\u0301"
    assert clean_text("\x1b[31mred\x9b\u202eevil") == "[31mredevil"


async def test_protocol_version_with_trailing_newline(raw: RawServer, dev_settings: Settings) -> None:
    raw.routes["/mcp"] = _initialize_answer({"name": "nl"}, version="2025-11-25\n")
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert result.status == "ok"
    assert result.protocol_version == "2025-11-25"
    later = [r for r in raw.requests_to("/mcp") if r.message.get("method") == "tools/list"]
    assert later and "mcp-protocol-version" not in later[0].headers  # not a valid token: not echoed


async def test_whitespace_body_in_one_byte_chunks(raw: RawServer, dev_settings: Settings) -> None:
    @raw.route("/mcp")
    def spaces(request: Request, conn: socket.socket) -> bool:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n")
        conn.sendall(b"1\r\n \r\n" * 20_000 + b"0\r\n\r\n")
        return True

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason) == ("not_mcp", "empty_reply")  # blanks only: an empty body


@pytest.mark.parametrize("address", ["2001:100::1", "2001:1ff::1", "2001:10::1", "2001:20::1"])
def test_ietf_protocol_assignments_are_not_public(address: str) -> None:
    assert classify(ipaddress.ip_address(address)) is not None


def test_ietf_globally_reachable_exceptions_stay_public() -> None:
    assert classify(ipaddress.ip_address("2001:4:112::1")) is None


async def test_empty_resolver_answer_is_dns_no_records() -> None:
    class Empty:
        async def resolve(self, host: str, port: int) -> list[IPAddress]:
            return []

    result = await probe("https://empty.example.com/mcp", settings=Settings(), resolver=Empty())
    assert (result.status, result.reason) == ("dns", "dns_no_records")


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
