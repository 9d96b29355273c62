"""Regression tests, one per fault found by attacking the probe with hostile servers."""

from __future__ import annotations

import ipaddress
import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
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


# --- faults found by attacking the SSE, auth and TLS paths ---------------------------------


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


async def test_metadata_resource_that_is_not_a_url(raw: RawServer, dev_settings: Settings) -> None:
    @raw.route("/mcp")
    def protected(request: Request, conn: socket.socket) -> None:
        send(conn, 401, {"www-authenticate": "Bearer"})

    @raw.route("/.well-known/oauth-protected-resource/mcp")
    def metadata(request: Request, conn: socket.socket) -> None:
        send_json(conn, 200, {"resource": "https://[oops", "authorization_servers": ["https://as.example.com"]})

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert result.auth is not None and result.auth.metadata is not None
    assert result.auth.metadata.resource_matches is False


def test_certificate_dates_python_cannot_hold(tmp_path: Path) -> None:
    from app.probe.tls import certificate_facts
    from tests.servers.network import self_signed_der

    der = self_signed_der("mcp.example.com", tmp_path, not_after_year=2100)
    patched = der.replace(b"21000101000000Z", b"00000101000000Z")
    assert patched != der
    facts = certificate_facts(patched, verified=False)
    assert facts.not_after is None and facts.days_left is None
    assert facts.names == ["mcp.example.com"] and facts.not_before is not None


async def test_metadata_host_lookup_is_bounded_by_the_deadline(raw: RawServer) -> None:
    class SlowForMetadata:
        async def resolve(self, host: str, port: int) -> list[IPAddress]:
            if host == "slow.example.net":
                await anyio.sleep(30)
            return [ipaddress.ip_address("127.0.0.1")]

    @raw.route("/mcp")
    def late_401(request: Request, conn: socket.socket) -> None:
        send(conn, 401, {"www-authenticate": 'Bearer resource_metadata="http://slow.example.net/prm"'})

    settings = Settings(allow_private=True, probe_timeout_s=3.0, step_timeout_s=2.0, session_end_timeout_s=0.5)
    started = time.monotonic()
    result = await probe(raw.url("/mcp"), settings=settings, resolver=SlowForMetadata())
    assert time.monotonic() - started < 3.5
    assert result.auth is not None and result.auth.lookups[0].failed == "probe_deadline"


async def test_resource_metadata_is_judged_as_sent_not_as_cleaned(raw: RawServer, dev_settings: Settings) -> None:
    @raw.route("/mcp")
    def protected(request: Request, conn: socket.socket) -> bool:
        value = f'Bearer resource_metadata="{raw.url("/pr")}\u202em"'.encode()
        conn.sendall(b"HTTP/1.1 401 X\r\ncontent-length: 0\r\nwww-authenticate: " + value + b"\r\n\r\n")
        return False

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert result.auth is not None
    assert result.auth.lookups[0].refused == "url_malformed"
    assert raw.requests_to("/prm") == []


async def test_development_switch_still_refuses_link_local(raw: RawServer, dev_settings: Settings) -> None:
    @raw.route("/mcp")
    def protected(request: Request, conn: socket.socket) -> None:
        send(conn, 401, {"www-authenticate": 'Bearer resource_metadata="http://169.254.169.254/latest/meta-data"'})

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert result.auth is not None
    assert result.auth.lookups[0].refused == "address_not_public"


async def test_deep_json_with_a_raised_recursion_limit(raw: RawServer, dev_settings: Settings) -> None:
    """Deeply nested JSON must not reach the C decoder even when some library raised the recursion limit."""

    @raw.route("/mcp")
    def deep(request: Request, conn: socket.socket) -> None:
        send(conn, 200, {"content-type": "application/json"}, b"[" * 100_000 + b"]" * 100_000)  # under the cap

    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(1_000_000)
    try:
        result = await probe(raw.url("/mcp"), settings=dev_settings)
    finally:
        sys.setrecursionlimit(previous)
    assert (result.status, result.reason) == ("not_mcp", "invalid_json")


def test_jsonsafe_depth_limit() -> None:
    from app import jsonsafe

    assert jsonsafe.loads(b'{"a": [[["x"]]], "s": "[[[[[[[["}') == {"a": [[["x"]]], "s": "[[[[[[[["}
    assert jsonsafe.loads("[" * 64 + "]" * 64) is not None
    with pytest.raises(jsonsafe.TooDeep):
        jsonsafe.loads("[" * 65 + "]" * 65)
    with pytest.raises(ValueError):
        jsonsafe.loads(b"{nope")
