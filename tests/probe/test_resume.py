"""Event streams that close before the answer (MCP 2025-11-25 Streamable HTTP, resumability and
redelivery): resumed with GET and Last-Event-ID within the budget, never a failure by themselves;
a stream that closes without an id, or whose resumed stream never answers, keeps its verdict."""

from __future__ import annotations

import json
import socket
import time

import pytest

from app.probe import probe
from app.settings import Settings
from tests.servers.raw import RawServer, Request, send
from tests.servers.raw_mcp import MiniMcp
from tests.servers.sdk_apps import RESUMABLE_EVENTS

pytestmark = pytest.mark.anyio


async def test_the_sdk_server_that_closes_the_tools_list_stream_is_resumed(
    sdk_base: str, dev_settings: Settings
) -> None:
    before = RESUMABLE_EVENTS.replays
    result = await probe(f"{sdk_base}/resumable/mcp", settings=dev_settings)
    assert (result.status, result.reason) == ("ok", "ok"), result.detail
    assert result.tools is not None and result.tools.names == ["resumed"]
    assert RESUMABLE_EVENTS.replays > before  # the answer came on a stream resumed from the store


def rounds(gets: list[Request]) -> list[list[str]]:
    """The Last-Event-ID values asked, one list per request resumed (each begins at the priming id;
    an early ``tools/list`` beside ``notifications/initialized`` may be given up and asked again)."""
    found: list[list[str]] = []
    for get in gets:
        last = get.headers["last-event-id"]
        if last == "ev-0":
            found.append([])
        found[-1].append(last)
    return found


def _event(event_id: str | None, message: object | None = None, retry: int | None = None) -> str:
    lines = [f"retry: {retry}"] if retry is not None else []
    lines += [f"id: {event_id}"] if event_id is not None else []
    lines += [f"data: {json.dumps(message)}" if message is not None else "data: "]
    return "\n".join(lines) + "\n\n"


class ClosingEarly:
    """A MiniMcp whose ``tools/list`` stream closes after a priming event; GET with Last-Event-ID
    answers with the events after it, in ``parts`` streams (the last one holds the answer)."""

    def __init__(self, *, with_id: bool = True, retry: int = 20, parts: int = 1, answers: bool = True) -> None:
        self.mini = MiniMcp(reply="sse")
        self.with_id, self.retry, self.parts, self.answers = with_id, retry, parts, answers
        self.pending: dict[str, object] = {}
        self.gets: list[Request] = []

    def __call__(self, request: Request, conn: socket.socket) -> bool | None:
        sse = {"content-type": "text/event-stream"}
        if request.method == "GET":
            self.gets.append(request)
            last = request.headers.get("last-event-id", "")
            step = int(last.rsplit("-", 1)[-1]) if last.startswith("ev-") else 0
            if step + 1 < self.parts:  # another stream that closes with one more id
                note = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": step}}
                send(conn, 200, sse, _event(f"ev-{step + 1}", note, self.retry).encode())
                return True
            if not self.answers:
                time.sleep(30)  # a resumed stream that never answers (the probe's budget ends first)
                return True
            body = _event("ev-final", self.pending.get("tools/list"))
            send(conn, 200, sse, body.encode())
            return True
        message = request.message
        if message.get("method") != "tools/list":
            return self.mini(request, conn)
        self.pending["tools/list"] = {"jsonrpc": "2.0", "id": message["id"], "result": self.mini._result("tools/list")}
        priming = _event("ev-0" if self.with_id else None, None, self.retry)
        send(conn, 200, sse, priming.encode())
        return True


async def test_a_stream_closed_after_a_priming_event_is_resumed_with_last_event_id(
    raw: RawServer, dev_settings: Settings
) -> None:
    server = ClosingEarly()
    raw.routes["/mcp"] = server
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason) == ("ok", "ok"), result.detail
    assert result.tools is not None and result.tools.names == ["alpha", "beta"]
    get = server.gets[-1]
    assert (
        rounds(server.gets)[-1] == ["ev-0"]
        and get.headers["last-event-id"] == "ev-0"
        and get.headers["accept"] == "text/event-stream"
    )
    assert get.headers["mcp-protocol-version"] == "2025-11-25"


async def test_a_stream_closed_three_times_is_resumed_each_time(raw: RawServer, dev_settings: Settings) -> None:
    server = ClosingEarly(parts=3)
    raw.routes["/mcp"] = server
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason) == ("ok", "ok"), result.detail
    assert rounds(server.gets)[-1] == ["ev-0", "ev-1", "ev-2"]


async def test_a_stream_that_keeps_closing_is_resumed_a_few_times_then_keeps_its_verdict(
    raw: RawServer, dev_settings: Settings
) -> None:
    server = ClosingEarly(parts=50)
    raw.routes["/mcp"] = server
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason, result.failed_step) == ("not_mcp", "no_response_in_stream", "tools/list")
    assert rounds(server.gets)[-1] == ["ev-0", "ev-1", "ev-2"]  # three resumptions, no more
    assert all(len(asked) <= 3 for asked in rounds(server.gets))


async def test_a_stream_closed_without_an_id_is_not_resumed(raw: RawServer, dev_settings: Settings) -> None:
    server = ClosingEarly(with_id=False)
    raw.routes["/mcp"] = server
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason, result.failed_step) == ("not_mcp", "no_response_in_stream", "tools/list")
    assert server.gets == []


async def test_a_retry_longer_than_the_budget_is_not_waited_for(raw: RawServer, dev_settings: Settings) -> None:
    server = ClosingEarly(retry=600_000)
    raw.routes["/mcp"] = server
    started = time.monotonic()
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert result.reason == "no_response_in_stream" and server.gets == []
    assert time.monotonic() - started < 60  # (the ten-minute wait was never begun)


async def test_a_resumed_stream_that_never_answers_keeps_the_verdict(raw: RawServer, dev_settings: Settings) -> None:
    server = ClosingEarly(answers=False)
    raw.routes["/mcp"] = server
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason, result.failed_step) == ("not_mcp", "no_response_in_stream", "tools/list")
    assert rounds(server.gets)[-1] == ["ev-0"]


async def test_a_resumption_refused_with_405_keeps_the_verdict(raw: RawServer, dev_settings: Settings) -> None:
    server = ClosingEarly()

    @raw.route("/mcp")
    def no_get(request: Request, conn: socket.socket) -> bool | None:
        if request.method == "GET":
            server.gets.append(request)
            send(conn, 405, {"allow": "POST"})
            return None
        return server(request, conn)

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason) == ("not_mcp", "no_response_in_stream")
    assert rounds(server.gets)[-1] == ["ev-0"]
