"""The probe at the round-trip floor: what overlaps, what is dialled ahead, and that verdicts stay.

Round trips themselves are measured across a real link by ``bench/link.py``; these tests check
the behaviour behind them on loopback: request order, connection counts, the warm connection's
life, and the verdict when something overlapped goes wrong.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from pathlib import Path

import anyio
import anyio.to_thread
import httpx2
import pytest
import trustme

from app.probe.result import ProbeResult
from app.probe.runner import observe
from app.settings import Settings
from tests.servers.network import server_context
from tests.servers.raw import RawServer, Request, send, send_json
from tests.servers.raw_mcp import MiniMcp

pytestmark = pytest.mark.anyio


class _Concurrent:
    """Counts the connections a raw server has open at once (most seen)."""

    def __init__(self, raw: RawServer) -> None:
        self.now = self.most = 0
        self._lock = threading.Condition()
        serve = raw._serve_connection

        def counted(conn: socket.socket) -> None:
            with self._lock:
                self.now += 1
                self.most = max(self.most, self.now)
            try:
                serve(conn)
            finally:
                with self._lock:
                    self.now -= 1
                    self._lock.notify_all()

        raw._serve_connection = counted  # type: ignore[method-assign]

    def wait_idle(self, timeout_s: float) -> bool:
        """Wait until no connection is open; ``False`` after ``timeout_s``."""
        with self._lock:
            return self._lock.wait_for(lambda: self.now == 0, timeout_s)


def _tls_server(tmp_path: Path) -> tuple[RawServer, Settings]:
    """A raw TLS server for 127.0.0.1 (a trustme CA) and settings that trust it."""
    authority = trustme.CA()
    bundle = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(bundle))
    server = RawServer(ssl_context=server_context(authority, "127.0.0.1"))
    return server, Settings(allow_private=True, ca_bundle=str(bundle), probe_timeout_s=8.0)


async def _probe_tls(server: RawServer, settings: Settings) -> tuple[ProbeResult, _Concurrent]:
    server.start()
    try:
        seen = _Concurrent(server)
        return (await observe(server.url("/mcp"), settings=settings)).result, seen
    finally:
        server.stop()


def _methods(raw: RawServer) -> list[str]:
    return [r.message.get("method") or r.method for r in raw.seen]


async def test_the_notification_goes_first_and_the_listing_beside_it_on_a_second_connection(
    raw: RawServer, dev_settings: Settings
) -> None:
    raw.routes["/mcp"] = MiniMcp(issue_session="s-1")
    seen = _Concurrent(raw)
    steps: list[str] = []
    observation = await observe(raw.url("/mcp"), settings=dev_settings, observer=steps.append)
    assert (observation.result.status, observation.result.tools and observation.result.tools.count) == ("ok", 2)
    # the listing starts once the notification is on the wire (which of two threads of a server
    # reads first is the server's affair: a page it refuses meanwhile is asked again, below)
    assert steps.index("notifications/initialized") < steps.index("tools/list")
    methods = _methods(raw)
    assert methods.count("tools/list") == 1 and "notifications/initialized" in methods  # not asked again
    assert raw.connections == 2 and seen.most <= 2


async def test_a_first_page_refused_before_the_notification_arrived_is_asked_again(
    raw: RawServer, dev_settings: Settings
) -> None:
    """A server that takes requests out of order (or refuses them until it has seen the notification)
    is judged as if the probe had waited for the notification's answer."""
    mini = MiniMcp(issue_session="s-2")
    initialized = threading.Event()
    answered_early = []

    @raw.route("/mcp")
    def strict(request: Request, conn: socket.socket) -> bool | None:
        method = request.message.get("method")
        if method == "notifications/initialized":
            time.sleep(0.5)  # the listing arrives meanwhile, on the other connection
            initialized.set()
        if method == "tools/list" and not initialized.is_set():
            answered_early.append(True)
            error = {"code": -32602, "message": "Received request before initialization was complete"}
            send_json(conn, 200, {"jsonrpc": "2.0", "id": request.message.get("id"), "error": error})
            return None
        return mini(request, conn)

    observation = await observe(raw.url("/mcp"), settings=dev_settings)
    result = observation.result
    assert answered_early == [True]
    assert (result.status, result.tools and result.tools.names) == ("ok", ["alpha", "beta"])
    assert "tools_list_error" not in result.warnings and _methods(raw).count("tools/list") == 2


async def test_a_failed_notification_decides_the_verdict_though_the_listing_went_beside_it(
    raw: RawServer, dev_settings: Settings
) -> None:
    mini = MiniMcp(issue_session="s-3")

    @raw.route("/mcp")
    def drops_the_notification(request: Request, conn: socket.socket) -> bool | None:
        if request.message.get("method") == "notifications/initialized":
            time.sleep(0.2)
            return True  # the connection closes without an answer (and again on the retry)
        return mini(request, conn)

    result = (await observe(raw.url("/mcp"), settings=dev_settings)).result
    assert (result.status, result.failed_step) == ("unreachable", "notifications/initialized")


async def test_a_url_that_takes_no_post_opens_the_legacy_stream_before_posting_initialize(
    sdk_base: str, dev_settings: Settings
) -> None:
    """``server/discover`` got 405: ``initialize`` would get it too, so the stream is opened at once."""
    observation = await observe(f"{sdk_base}/legacy-sse/sse", settings=dev_settings)
    result = observation.result
    assert (result.status, result.transport, result.tools and result.tools.count) == ("ok", "sse", 3)
    assert result.timings.sse_connect_ms is not None


async def test_a_405_to_discover_from_a_server_that_has_no_stream_still_gets_initialize(
    raw: RawServer, dev_settings: Settings
) -> None:
    @raw.route("/mcp")
    def post_refused(request: Request, conn: socket.socket) -> bool | None:
        send(conn, 405, {"allow": "GET", "content-type": "text/plain"}, b"Method Not Allowed")
        return None

    result = (await observe(raw.url("/mcp"), settings=dev_settings)).result
    assert (result.status, result.reason, result.failed_step) == ("client_error", "method_not_allowed", "initialize")
    assert [r.method for r in raw.seen] == ["POST", "GET", "POST"]  # discover, the stream, initialize


async def test_a_warm_connection_nobody_claimed_is_closed_with_the_probe(
    raw: RawServer, dev_settings: Settings
) -> None:
    raw.routes["/mcp"] = MiniMcp()
    seen = _Concurrent(raw)

    @raw.route("/fails")
    def refuse_initialize(request: Request, conn: socket.socket) -> bool | None:
        send_json(conn, 400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "no"}})
        return None

    for _ in range(5):  # initialize fails, so the connection warmed for the notification is never used
        result = (await observe(raw.url("/fails"), settings=dev_settings)).result
        assert result.status == "client_error"
        assert await anyio.to_thread.run_sync(seen.wait_idle, 3.0)  # the server saw every connection close
    assert seen.most <= 2


async def test_over_tls_the_second_connection_is_dialled_during_discover_with_its_handshake(
    tmp_path: Path,
) -> None:
    server, settings = _tls_server(tmp_path)
    server.routes["/mcp"] = MiniMcp(issue_session="s-4")
    result, seen = await _probe_tls(server, settings)
    assert (result.status, result.tls and result.tls.verified) == ("ok", True)
    assert server.connections == 2 and seen.most <= 2


# --- regressions from an attack on the overlap (each was a verdict change or a fourth socket) ---


async def test_a_server_that_serves_one_connection_at_a_time_is_ok(raw: RawServer, dev_settings: Settings) -> None:
    """The early page waits on a connection the server will not serve while ours is open: it is dropped
    once the notification was answered, and the page asked again on the first connection."""
    raw.routes["/mcp"] = MiniMcp(issue_session="s-5")
    one_at_a_time = threading.Lock()
    serve = raw._serve_connection

    def serial(conn: socket.socket) -> None:
        with one_at_a_time:
            serve(conn)

    raw._serve_connection = serial  # type: ignore[method-assign]
    started = time.monotonic()
    result = (await observe(raw.url("/mcp"), settings=dev_settings)).result
    assert (result.status, result.tools and result.tools.count) == ("ok", 2)
    assert time.monotonic() - started < 3.0


@pytest.mark.parametrize("early", ["dropped", "ignored"])
async def test_an_early_page_the_server_drops_or_ignores_is_asked_again(
    raw: RawServer, dev_settings: Settings, early: str
) -> None:
    mini = MiniMcp(issue_session="s-6")
    initialized = threading.Event()

    @raw.route("/mcp")
    def picky(request: Request, conn: socket.socket) -> bool | None:
        method = request.message.get("method")
        if method == "notifications/initialized":
            time.sleep(0.3)
            initialized.set()
        if method == "tools/list" and not initialized.is_set():
            if early == "ignored":
                time.sleep(5)
            return True  # closed without an answer
        return mini(request, conn)

    result = (await observe(raw.url("/mcp"), settings=dev_settings)).result
    assert (result.status, result.tools and result.tools.names) == ("ok", ["alpha", "beta"])
    assert result.timings.tools_list_ms is not None


@pytest.mark.parametrize(
    ("status", "headers"),
    [(405, {"allow": "GET, POST"}), (405, {}), (404, {"content-type": "text/plain"})],
)
async def test_a_refused_discover_that_does_not_rule_out_post_gets_initialize_first(
    raw: RawServer, dev_settings: Settings, status: int, headers: dict[str, str]
) -> None:
    """Only a 405 whose Allow names GET and not POST opens the stream first: here a Streamable HTTP
    server's GET would open a stream that never names an endpoint (10 s lost, a wrong verdict)."""
    mini = MiniMcp()

    @raw.route("/mcp")
    def odd(request: Request, conn: socket.socket) -> bool | None:
        if request.method == "GET":
            send(conn, 200, {"content-type": "text/event-stream"}, b": standalone stream\n\n")
            time.sleep(12)
            return True
        if request.message.get("method") == "server/discover":
            send(conn, status, headers, b"no")
            return None
        return mini(request, conn)

    started = time.monotonic()
    result = (await observe(raw.url("/mcp"), settings=dev_settings)).result
    assert (result.status, result.transport) == ("ok", "streamable_http")
    assert time.monotonic() - started < 3.0 and "GET" not in [r.method for r in raw.seen]


async def test_discover_answered_with_connection_close_over_tls_never_makes_three_connections(tmp_path: Path) -> None:
    server, settings = _tls_server(tmp_path)
    mini = MiniMcp(issue_session="s-7")

    @server.route("/mcp")
    def closes_after_discover(request: Request, conn: socket.socket) -> bool | None:
        if request.message.get("method") == "server/discover":
            error = {"code": -32000, "message": "Bad Request: Server not initialized"}
            send_json(conn, 400, {"jsonrpc": "2.0", "id": None, "error": error}, {"connection": "close"})
            return True
        return mini(request, conn)

    result, seen = await _probe_tls(server, settings)
    assert result.status == "ok" and seen.most <= 2


async def test_a_warm_connection_the_server_dropped_before_answering_is_counted_once() -> None:
    """Such a connection gives its request a retry of its own (see Exchanger._send_with_retry)."""
    from app.net.dial import SocketDialler, open_connection
    from app.net.h1.connection import Connection
    from app.net.warm import WarmPool

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def accept_and_close() -> None:
        conn, _ = listener.accept()
        time.sleep(0.1)  # an idle-connection timeout on the server
        conn.close()

    thread = threading.Thread(target=accept_and_close)
    thread.start()
    pool = WarmPool()
    try:

        async def dial() -> Connection:
            return await open_connection(await SocketDialler().connect_tcp("127.0.0.1", port, 5.0), None, 5.0)

        assert pool.start(("127.0.0.1", port), dial, 2.0)
        connection = await pool.claim(("127.0.0.1", port))
        assert connection is not None and pool.died == 0
        with contextlib.suppress(httpx2.RemoteProtocolError, httpx2.ReadError):  # (dropped before any answer)
            connection.send(b"POST /mcp HTTP/1.1\r\nHost: x\r\n\r\n")
            await connection.receive_head(5.0)
            raise AssertionError("a head arrived from a server that only closes")
        assert pool.died == 1
        connection.close()
        await anyio.sleep(0.05)
        assert pool.died == 1  # (told once)
    finally:
        await pool.aclose()
        thread.join()
        listener.close()


async def test_a_warm_connection_that_idled_too_long_is_not_used() -> None:
    from app.net import warm
    from app.net.dial import SocketDialler, open_connection
    from app.net.h1.connection import Connection

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    pool = warm.WarmPool()
    try:

        async def dial() -> Connection:
            return await open_connection(await SocketDialler().connect_tcp("127.0.0.1", port, 5.0), None, 5.0)

        assert pool.start(("127.0.0.1", port), dial, 2.0)
        await anyio.sleep(0.1)
        original, warm.MAX_IDLE_S = warm.MAX_IDLE_S, 0.05
        try:
            assert await pool.claim(("127.0.0.1", port)) is None  # closed: the pool dials afresh
        finally:
            warm.MAX_IDLE_S = original
    finally:
        await pool.aclose()
        listener.close()
