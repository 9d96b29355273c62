"""Regression tests: deviations a tolerant client reads past must not turn a working server into a failure."""

from __future__ import annotations

import json
import socket
import sys
import time
from typing import Any

import anyio
import pytest

from app.probe import probe
from app.probe.runner import observe
from app.settings import Settings
from tests.servers.raw import RawServer, Request, send, send_json
from tests.servers.raw_mcp import MiniMcp

pytestmark = pytest.mark.anyio


class Scripted(MiniMcp):
    """MiniMcp whose answers per method can be replaced: ``answers[method] = result or callable``."""

    def __init__(self, answers: dict[str, Any], **knobs: Any) -> None:
        super().__init__(**knobs)
        self.answers = answers

    def _result(self, method: object) -> dict[str, Any]:
        if isinstance(method, str) and method in self.answers:
            answer = self.answers[method]
            return answer() if callable(answer) else answer  # type: ignore[no-any-return]
        return super()._result(method)


def _tool(name: str) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object"}}


async def test_tools_list_result_as_bare_array_counts_the_tools(raw: RawServer, dev_settings: Settings) -> None:
    raw.routes["/mcp"] = Scripted({"tools/list": [_tool("a"), _tool("b")]})
    observation = await observe(raw.url("/mcp"), settings=dev_settings)
    result = observation.result
    assert (result.status, result.tools and result.tools.count) == ("ok", 2)
    assert "result_bare_array" in observation.evidence.list_problems and "result_bare_array" in result.warnings


async def test_tools_as_an_object_of_tools_counts_the_tools(raw: RawServer, dev_settings: Settings) -> None:
    raw.routes["/mcp"] = Scripted({"tools/list": {"tools": {"a": {"inputSchema": {}}, "b": _tool("b")}}})
    observation = await observe(raw.url("/mcp"), settings=dev_settings)
    assert observation.result.tools is not None and observation.result.tools.names == ["a", "b"]
    assert observation.evidence.list_problems == ["tools_as_object"]


async def test_entries_that_are_not_objects_are_counted_invalid(raw: RawServer, dev_settings: Settings) -> None:
    tools = ["a", None, 7, {"title": "no name"}, {"name": ""}, _tool("real")]
    raw.routes["/mcp"] = Scripted({"tools/list": {"tools": tools}})
    observation = await observe(raw.url("/mcp"), settings=dev_settings)
    info = observation.result.tools
    assert info is not None and (info.count, info.invalid_entries, info.names) == (1, 5, ["real"])
    assert observation.evidence.list_problems == ["entry_not_object", "entry_without_name"]
    assert observation.result.status == "ok"


async def test_pages_that_repeat_tools_count_each_tool_once(raw: RawServer, dev_settings: Settings) -> None:
    pages = iter(
        [
            {"tools": [_tool("a"), _tool("b"), _tool("a")], "nextCursor": "2"},
            {"tools": [_tool("b"), _tool("c")]},
        ]
    )
    raw.routes["/mcp"] = Scripted({"tools/list": lambda: next(pages)})
    observation = await observe(raw.url("/mcp"), settings=dev_settings)
    info = observation.result.tools
    assert info is not None and (info.count, info.names, info.duplicate_entries) == (3, ["a", "b", "c"], 2)
    assert [t["name"] for t in observation.evidence.tool_entries] == ["a", "b", "c"]
    assert observation.evidence.list_complete


@pytest.mark.parametrize("spelling", ["string", "float"])
async def test_response_id_spelled_as_another_json_type_is_accepted(
    raw: RawServer, dev_settings: Settings, spelling: str
) -> None:
    @raw.route("/mcp")
    def answer(request: Request, conn: socket.socket) -> None:
        message = request.message
        if "id" not in message:
            send(conn, 202)
            return
        result = MiniMcp()._result(message.get("method"))
        wire_id: object = str(message["id"]) if spelling == "string" else float(message["id"])
        send_json(conn, 200, {"jsonrpc": "2.0", "id": wire_id, "result": result})

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.tools and result.tools.count) == ("ok", 2)
    assert "response_id_type_changed" in result.warnings


@pytest.mark.parametrize(
    ("initialize", "warning"),
    [
        ({"capabilities": {}, "serverInfo": {"name": "x", "version": "1"}}, "protocol_version_missing"),
        ({"protocolVersion": 20251125, "capabilities": {}}, "protocol_version_missing"),
        ({"protocolVersion": "2025-11-25", "serverInfo": "x", "capabilities": {}}, "server_info_invalid"),
        ({"protocolVersion": "2025-11-25", "capabilities": ["tools"]}, "capabilities_invalid"),
        ({}, "protocol_version_missing"),
    ],
)
async def test_initialize_result_with_missing_or_mistyped_fields_is_a_working_server(
    raw: RawServer, dev_settings: Settings, initialize: dict[str, Any], warning: str
) -> None:
    raw.routes["/mcp"] = Scripted({"initialize": initialize})
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.era, result.tools and result.tools.count) == ("ok", "legacy", 2)
    assert warning in result.warnings


async def test_initialize_result_that_is_not_an_object_is_invalid_result(
    raw: RawServer, dev_settings: Settings
) -> None:
    raw.routes["/mcp"] = Scripted({"initialize": ["2025-11-25"]})
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason, result.failed_step) == ("server_error", "invalid_result", "initialize")


async def test_body_shorter_than_its_content_length_with_the_whole_response_is_read(
    raw: RawServer, dev_settings: Settings
) -> None:
    @raw.route("/mcp")
    def short(request: Request, conn: socket.socket) -> bool | None:
        message = request.message
        if "id" not in message:
            send(conn, 202)
            return None
        body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": MiniMcp()._result(message["method"])})
        head = f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(body) + 40}\r\n\r\n"
        conn.sendall(head.encode() + body.encode())
        return True  # close: the body ends 40 bytes early

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.tools and result.tools.count) == ("ok", 2)
    assert "reply_incomplete" in result.warnings


async def test_body_that_breaks_off_is_the_servers_fault_not_unreachable(
    raw: RawServer, dev_settings: Settings
) -> None:
    @raw.route("/mcp")
    def broken(request: Request, conn: socket.socket) -> bool:
        head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
        conn.sendall(head.encode() + b'20\r\n{"jsonrpc":"2.0","id":1,"result":')
        return True

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason) == ("server_error", "reply_incomplete")


async def test_budget_is_shared_by_the_whole_probe_not_cut_per_exchange(raw: RawServer) -> None:
    # A server that takes longer than the old per-exchange cap (8 s, scaled down here) to answer initialize.
    slow = MiniMcp()

    @raw.route("/mcp")
    def slow_initialize(request: Request, conn: socket.socket) -> bool | None:
        if request.message.get("method") == "initialize":
            time.sleep(2.5)
        return slow(request, conn)

    settings = Settings(allow_private=True, probe_timeout_s=6.0, session_end_timeout_s=0.5)
    assert settings.step_timeout_s >= settings.probe_timeout_s  # by default an exchange may use the whole budget
    result = await probe(raw.url("/mcp"), settings=settings)
    assert (result.status, result.tools and result.tools.count) == ("ok", 2)
    assert result.latency_ms is not None and result.latency_ms >= 2500


async def test_budget_running_out_during_tools_list_keeps_what_the_handshake_found(raw: RawServer) -> None:
    mini = MiniMcp()

    @raw.route("/mcp")
    def slow_list(request: Request, conn: socket.socket) -> bool | None:
        if request.message.get("method") == "tools/list":
            time.sleep(3)
        return mini(request, conn)

    settings = Settings(allow_private=True, probe_timeout_s=2.0, session_end_timeout_s=0.5)
    observation = await observe(raw.url("/mcp"), settings=settings)
    result = observation.result
    assert (result.status, result.reason, result.failed_step) == ("timeout", "probe_deadline", "tools/list")
    assert result.server is not None and result.server.name == "mini"
    assert (result.era, result.transport, result.protocol_version) == ("legacy", "streamable_http", "2025-11-25")
    assert observation.evidence.answered and observation.evidence.handshake == "initialize"


def _stalling(raw: RawServer, kind: str) -> None:
    """Answers every request completely, then leaves the body open (each ``kind`` a framing)."""

    @raw.route("/mcp")
    def stall(request: Request, conn: socket.socket) -> bool | None:
        message = request.message
        if message.get("method") == "server/discover":  # a 2025-era server: initialize, then a notification
            error = {"code": -32000, "message": "Bad Request: Server not initialized"}
            send_json(conn, 400, {"jsonrpc": "2.0", "id": None, "error": error})
            return None
        if "id" not in message:
            if kind == "notification_stream":  # notifications/initialized answered with an open stream
                conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n: hello\n\n")
                time.sleep(10)
                return True
            send(conn, 202)
            return None
        body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": MiniMcp()._result(message["method"])})
        if kind == "content_length_too_large":
            head = f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(body) + 100}\r\n\r\n"
            conn.sendall(head.encode() + body.encode())
        elif kind == "chunked_without_last_chunk":
            head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
            conn.sendall(head.encode() + f"{len(body):x}\r\n{body}\r\n".encode())
        elif kind == "sse_event_without_blank_line":
            head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n"
            conn.sendall(head.encode() + f"event: message\ndata: {body}\n".encode())
        else:  # notification_stream: the requests themselves are answered normally
            send_json(conn, 200, json.loads(body))
            return None
        time.sleep(10)
        return True


@pytest.mark.parametrize(
    "kind",
    ["content_length_too_large", "chunked_without_last_chunk", "sse_event_without_blank_line", "notification_stream"],
)
async def test_complete_reply_whose_body_then_stalls_costs_no_budget(raw: RawServer, kind: str) -> None:
    _stalling(raw, kind)
    settings = Settings(allow_private=True, probe_timeout_s=8.0, session_end_timeout_s=0.5)  # default step cap
    started = time.monotonic()
    result = await probe(raw.url("/mcp"), settings=settings)
    assert (result.status, result.tools and result.tools.count) == ("ok", 2), result.reason
    assert time.monotonic() - started < 5.0  # a grace of 0.5 s per stalled reply, never the budget
    assert "reply_incomplete" in result.warnings


async def test_sse_retry_field_of_thousands_of_digits_is_ignored(raw: RawServer, dev_settings: Settings) -> None:
    @raw.route("/mcp")
    def retry(request: Request, conn: socket.socket) -> None:
        message = request.message
        if "id" not in message:
            send(conn, 202)
            return
        body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": MiniMcp()._result(message["method"])})
        stream = "retry: " + "9" * 5000 + "\n\nevent: message\ndata: " + body + "\n\n"
        send(conn, 200, {"content-type": "text/event-stream"}, stream.encode())

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.tools and result.tools.count) == ("ok", 2)


async def test_one_absurd_integer_or_a_deep_schema_does_not_sink_the_page(
    raw: RawServer, dev_settings: Settings
) -> None:
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(80):
        deep = {"type": "object", "properties": {"x": deep}}

    @raw.route("/mcp")
    def odd(request: Request, conn: socket.socket) -> None:
        message = request.message
        if "id" not in message:
            send(conn, 202)
            return
        result = MiniMcp()._result(message["method"])
        if message["method"] == "tools/list":
            result = {"tools": [{"name": "deep", "inputSchema": deep}, {"name": "big", "inputSchema": {"maximum": 0}}]}
        body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})
        body = body.replace('"maximum": 0', '"maximum": ' + "9" * 5000)
        send(conn, 200, {"content-type": "application/json"}, body.encode())

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.tools and result.tools.names) == ("ok", ["deep", "big"])


async def test_a_handshake_may_use_the_time_kept_for_the_closing_delete(raw: RawServer) -> None:
    # With a 4 s budget a quarter (1 s) is kept for the DELETE; a 3.4 s initialize still counts.
    mini = MiniMcp(issue_session="s-1")

    @raw.route("/mcp")
    def slow(request: Request, conn: socket.socket) -> bool | None:
        if request.message.get("method") == "initialize":
            time.sleep(3.4)
        return mini(request, conn)

    settings = Settings(allow_private=True, probe_timeout_s=4.0, session_end_timeout_s=2.0)
    result = await probe(raw.url("/mcp"), light=True, settings=settings)
    assert (result.status, result.server and result.server.name) == ("ok", "mini")


async def test_an_sse_reply_ended_after_the_response_leaves_the_connection_for_the_next_request(
    raw: RawServer, dev_settings: Settings
) -> None:
    raw.routes["/mcp"] = MiniMcp(reply="sse", priming=True, issue_session="s-9")
    observation = await observe(raw.url("/mcp"), settings=dev_settings)
    assert observation.result.status == "ok" and observation.evidence.refusal is not None
    methods = [r.message.get("method") or r.method for r in raw.seen]
    assert methods[-1] == "DELETE" and "tools/call" in methods
    # discover, initialize, initialized, tools/list, tools/call, DELETE on two: the second was dialled
    # during initialize so that tools/list goes beside the notification; no connection per SSE reply
    assert raw.connections == 2


@pytest.mark.parametrize("shape", ["json_in_many_pieces", "sse_id_after_data", "sse_comment_after_data"])
async def test_a_stall_after_the_response_costs_little_however_the_reply_was_cut(raw: RawServer, shape: str) -> None:
    @raw.route("/mcp")
    def pieces(request: Request, conn: socket.socket) -> bool | None:
        message = request.message
        if message.get("method") == "server/discover":
            send_json(conn, 400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "no"}})
            return None
        if "id" not in message:
            send(conn, 202)
            return None
        result = MiniMcp(tools=[f"t{i}" for i in range(12)])._result(message["method"])
        body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})
        if shape == "json_in_many_pieces":  # flushed at every "}", more often than early parses are tried
            head = f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(body) + 50}\r\n\r\n"
            conn.sendall(head.encode())
            for part in body.replace("}", "}\0").split("\0"):
                conn.sendall(part.encode())
                time.sleep(0.005)
        else:
            tail = "id: 9\n" if shape == "sse_id_after_data" else ": keep-alive\n"
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n")
            conn.sendall(f"event: message\ndata: {body}\n{tail}".encode())
        time.sleep(10)
        return True

    settings = Settings(allow_private=True, probe_timeout_s=8.0, session_end_timeout_s=0.5)
    started = time.monotonic()
    result = await probe(raw.url("/mcp"), settings=settings)
    assert (result.status, result.tools and result.tools.count) == ("ok", 12), result.reason
    assert time.monotonic() - started < 5.0


async def test_a_truncated_page_nested_past_any_reply_is_not_salvaged_recursively() -> None:
    head = '{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a"},{"name":"b","x":'
    code = (
        "import sys; sys.setrecursionlimit(10**6)\n"
        "from datetime import UTC, datetime\n"
        "from app.probe.findings import Findings\n"
        "from app.probe.result import ToolsInfo\n"
        "from app.probe.tools import salvage_page\n"
        f"partial = {head!r}.encode() + b'[' * 300000\n"
        "tools = ToolsInfo()\n"
        "salvage_page(partial, tools, Findings(url='u', checked_at=datetime.now(UTC), light=False))\n"
        "print(tools.truncated)\n"
    )
    done = await anyio.run_process([sys.executable, "-c", code], check=False)
    assert (done.returncode, done.stdout.decode().strip()) == (0, "True"), done.stderr[-400:]
