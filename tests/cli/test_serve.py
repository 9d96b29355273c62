"""``mcp-sonde serve`` as a real process: its exit codes say why it stopped."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import httpx2
import pytest

from app.cli.codes import (
    EXIT_CODES,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_REFUSED,
    EXIT_USAGE,
    SERVE_EXIT_PORT,
    SERVE_EXIT_SETTINGS,
    SERVE_EXIT_STARTUP,
)
from tests.servers.ports import free_port, wait_listening, wait_ready
from tests.servers.redis_server import shared_redis_url
from tests.servers.sonde import finish, launch, sonde


def test_serve_codes_are_distinct_and_none_is_one_of_check_s() -> None:
    serve_only = [SERVE_EXIT_SETTINGS, SERVE_EXIT_PORT, SERVE_EXIT_STARTUP]
    check = {*EXIT_CODES.values(), EXIT_REFUSED, EXIT_INTERRUPTED}
    assert len(set(serve_only)) == 3 and not set(serve_only) & (check | {EXIT_USAGE, EXIT_INTERNAL})


def test_serve_help_lists_its_exit_codes() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "app", "serve", "--help"], capture_output=True, text=True, timeout=60, check=True
    )
    text = " ".join(done.stdout.split())
    for code in (f"{SERVE_EXIT_SETTINGS} invalid settings", f"{SERVE_EXIT_PORT} a port cannot be bound"):
        assert code in text
    assert f"{SERVE_EXIT_STARTUP} start-up failed" in text and "0 stopped cleanly" in text


@pytest.mark.parametrize("command", ["worker", "scheduler"])
def test_worker_and_scheduler_help_list_their_own_exit_codes_and_no_port(command: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "app", command, "--help"], capture_output=True, text=True, timeout=60, check=True
    )
    text = " ".join(done.stdout.split())
    assert f"{SERVE_EXIT_SETTINGS} invalid settings" in text and f"{SERVE_EXIT_STARTUP} start-up failed" in text
    assert "port" not in text.split("exit codes:", 1)[1]


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_a_clean_stop_exits_0(stop: signal.Signals) -> None:
    port = free_port()
    process = launch("serve", "--port", str(port))
    try:
        wait_listening(port, process)
        assert httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=10).status_code == 200
        process.send_signal(stop)
    finally:
        code, _out, err = finish(process)
    assert code == 0, err
    assert b"Traceback" not in err


def test_a_usage_error_exits_2() -> None:
    code, _out, err = finish(launch("serve", "--port", "eighty"))
    assert code == EXIT_USAGE and b"invalid int value" in err


@pytest.mark.parametrize(
    ("args", "env", "said"),
    [
        ((), {"MCP_SONDE_RATE_LIMIT": "often"}, b"invalid setting rate_limit"),
        (("--port", "70000"), {}, b"invalid setting port"),
        ((), {"MCP_SONDE_LOG_FORMAT": "xml"}, b"invalid setting log_format"),
        ((), {"MCP_SONDE_METRICS_PORT": "8000", "MCP_SONDE_PORT": "8000"}, b"metrics_port must differ"),
        (("--workers", "2"), {}, b"set REDIS_URL"),
    ],
)
def test_invalid_settings_exit_with_their_own_code(args: tuple[str, ...], env: dict[str, str], said: bytes) -> None:
    code, _out, err = finish(launch("serve", *args, env=env))
    assert code == SERVE_EXIT_SETTINGS and said in err and b"Traceback" not in err


@pytest.mark.parametrize("which", ["main", "metrics"])
def test_a_port_that_cannot_be_bound_exits_with_its_own_code(which: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        args = ("--port", str(busy)) if which == "main" else ("--port", str(free_port()))
        env = {"MCP_SONDE_METRICS_PORT": str(busy)} if which == "metrics" else {}
        code, _out, err = finish(launch("serve", *args, env=env))
    assert code == SERVE_EXIT_PORT
    assert f"cannot listen on 127.0.0.1 port {busy}".encode() in err and b"Traceback" not in err


def test_a_port_in_use_is_told_before_any_start_work(tmp_path: Path) -> None:
    """Regression: a port in use was reported after the key ring and the database's schema had
    been opened (40-60 s on a loaded machine). It is bound first now: nothing else is done."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        env = {"MCP_SONDE_DATA_DIR": str(tmp_path)}
        code, _out, err = finish(launch("serve", "--port", str(taken.getsockname()[1]), env=env))
    assert code == SERVE_EXIT_PORT
    assert list(tmp_path.iterdir()) == []  # no key generated, no database made
    assert b"signed with key" not in err and b"Started server process" not in err


#: Makes opening the key ring (the first step of the service's build) take 5 s.
SLOW_BUILD = """
import time
import app.cli.serve as serve
opened = serve.signing_ready
serve.signing_ready = lambda settings: (time.sleep(5), opened(settings))[1]
"""


def test_healthz_answers_while_the_service_is_built_and_readyz_once_it_is(tmp_path: Path) -> None:
    port = free_port()
    process = launch("serve", "--port", str(port), env={"MCP_SONDE_DATA_DIR": str(tmp_path)}, preamble=SLOW_BUILD)
    try:
        wait_listening(port, process)
        health = httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=10)
        ready = httpx2.get(f"http://127.0.0.1:{port}/readyz", timeout=10)
        check = httpx2.post(f"http://127.0.0.1:{port}/v1/mcp/check", json={"url": "https://a.example/mcp"}, timeout=10)
        assert not (tmp_path / "keys").exists()  # (all three answered while the build waited)
        wait_ready(port, process)
        after = httpx2.get(f"http://127.0.0.1:{port}/readyz", timeout=10)
        process.send_signal(signal.SIGTERM)
    finally:
        code, _out, err = finish(process)
    assert code == 0, err
    assert (health.status_code, health.json()) == (200, {"status": "ok"})
    assert (ready.status_code, ready.json(), ready.headers["retry-after"]) == (503, {"status": "starting"}, "1")
    assert (check.status_code, check.json()["reason"]) == (503, "starting")
    assert after.status_code == 200 and after.json()["status"] == "ready"
    assert f"listening on http://127.0.0.1:{port}".encode() in err  # (said first, as the service's own line)


def test_the_log_says_where_the_service_listens() -> None:
    """Regression: binding first, before the service's logging was applied, dropped the one line
    naming the address (uvicorn's own is not written when it is handed the sockets)."""
    port = free_port()
    process = launch("serve", "--port", str(port))
    try:
        wait_ready(port, process)
        process.send_signal(signal.SIGTERM)
    finally:
        code, _out, err = finish(process)
    assert code == 0, err
    lines = [json.loads(line) for line in err.splitlines() if line.startswith(b"{")]
    assert {"logger": "mcp_sonde.serve", "message": f"listening on http://127.0.0.1:{port}"}.items() <= lines[0].items()


#: A start-up step of the app's lifespan that refuses (as a facilitator lacking our scheme would).
REFUSING_START = """
import contextlib
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from app.errors import SondeError
@contextlib.asynccontextmanager
async def refuse(self):
    raise SondeError("facilitator_unsupported", "the facilitator does not settle exact on eip155:8453")
    yield
StreamableHTTPSessionManager.run = refuse
"""


def test_a_lifespan_start_up_failure_exits_with_its_own_code() -> None:
    code, _out, err = finish(launch("serve", "--port", str(free_port()), preamble=REFUSING_START))
    assert code == SERVE_EXIT_STARTUP
    assert b"start-up failed: facilitator_unsupported: the facilitator does not settle" in err


def test_a_worker_s_start_up_failure_stops_serve_with_the_same_code() -> None:
    env = {
        "MCP_SONDE_REDIS_URL": shared_redis_url(),
        "MCP_SONDE_REDIS_NAMESPACE": f"test-{uuid.uuid4().hex[:12]}:",
        "MCP_SONDE_OTEL_ENABLED": "1",
        "OTEL_TRACES_EXPORTER": "not-installed",
    }
    code, _out, err = finish(launch("serve", "--port", str(free_port()), "--workers", "2", env=env), timeout=120)
    assert code == SERVE_EXIT_STARTUP and b"otel_unavailable" in err


def test_with_two_workers_a_clean_stop_exits_0() -> None:
    env = {"MCP_SONDE_REDIS_URL": shared_redis_url(), "MCP_SONDE_REDIS_NAMESPACE": f"test-{uuid.uuid4().hex[:12]}:"}
    with sonde("--workers", "2", env=env) as served:
        assert httpx2.get(f"{served.base}/healthz", timeout=10).status_code == 200
    assert served.returncode == 0


def test_a_revoked_signing_key_stops_the_start_and_an_unreadable_one_is_a_settings_error(tmp_path: Path) -> None:
    """No check may be served unsigned or signed by a key its owner revoked: serve refuses to start."""
    from app.attest import keyring

    keys = tmp_path / "keys.json"
    pem = tmp_path / "signing.pem"
    entry = keyring.generate(keys, private_out=pem)
    keyring.revoke(keys, entry.keyid)
    env = {"MCP_SONDE_KEYS_FILE": str(keys), "MCP_SONDE_SIGNING_KEY_FILE": str(pem)}
    code, _out, err = finish(launch("serve", "--port", str(free_port()), env=env))
    assert code == SERVE_EXIT_STARTUP and b"signing_key_revoked" in err and b"Traceback" not in err
    pem.write_text("-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n")
    code, _out, err = finish(launch("serve", "--port", str(free_port()), env=env))
    assert code == SERVE_EXIT_SETTINGS and b"private_key_invalid" in err and b"Traceback" not in err


def test_the_first_start_generates_one_signing_key_and_says_so(tmp_path: Path) -> None:
    port = free_port()
    process = launch("serve", "--port", str(port), env={"MCP_SONDE_DATA_DIR": str(tmp_path)})
    try:
        wait_ready(port, process)
        published = httpx2.get(f"http://127.0.0.1:{port}/.well-known/mcp-sonde-keys.json", timeout=10).json()
        process.send_signal(signal.SIGTERM)
    finally:
        code, _out, err = finish(process)
    assert code == 0, err
    (key,) = published["keys"]
    assert f"generated {key['keyid']} into {tmp_path / 'keys'}".encode() in err
    assert sorted(p.name for p in (tmp_path / "keys").iterdir() if not p.name.startswith(".")) == [
        f"{key['keyid']}.pem",
        "keys.json",
    ]


def test_a_signing_key_of_an_unknown_algorithm_is_a_settings_error(tmp_path: Path) -> None:
    """cryptography raises UnsupportedAlgorithm, not ValueError, for such a key: no traceback."""
    from app.attest.keys import private_pem
    from tests.attest.forge import make_key
    from tests.attest.test_keys import unknown_algorithm

    pem = tmp_path / "signing.pem"
    pem.write_text(unknown_algorithm(private_pem(make_key().private).decode()))
    env = {"MCP_SONDE_KEYS_FILE": str(tmp_path / "keys.json"), "MCP_SONDE_SIGNING_KEY_FILE": str(pem)}
    code, _out, err = finish(launch("serve", "--port", str(free_port()), env=env))
    assert code == SERVE_EXIT_SETTINGS and b"private_key_invalid" in err and b"Traceback" not in err


def test_regression_answers_on_a_kept_alive_connection_do_not_wait_for_delayed_acks() -> None:
    """The listening socket was made without naming its protocol, so asyncio left Nagle's
    algorithm on for every connection (it sets TCP_NODELAY only where ``proto`` is IPPROTO_TCP),
    and each answer after a connection's first waited about 40 ms for the client's delayed ACK."""
    import asyncio

    from app.cli.serve import bind

    listener = bind("127.0.0.1", 0)
    port = listener.getsockname()[1]
    nodelay: list[int] = []

    async def run() -> None:
        def accepted(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            nodelay.append(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(accepted, sock=listener)
        async with server:
            _reader, writer = await asyncio.open_connection("127.0.0.1", port)
            for _ in range(200):
                if nodelay:
                    break
                await asyncio.sleep(0.05)
            writer.close()

    asyncio.run(run())
    assert listener.proto == socket.IPPROTO_TCP
    assert nodelay == [1]


def test_regression_a_websocket_upgrade_is_answered_as_http_and_its_query_string_never_logged() -> None:
    """uvicorn's WebSocket protocol wrote each upgrade's path with its query string to the log."""
    port = free_port()
    process = launch("serve", "--port", str(port))
    try:
        wait_ready(port, process)
        with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
            conn.sendall(
                b"GET /mcp?token=sekrit-value HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\n"
                b"Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
                b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
            )
            answer = conn.recv(65536)
        process.send_signal(signal.SIGTERM)
    finally:
        code, out, err = finish(process)
    assert code == 0, err
    assert answer.startswith(b"HTTP/1.1 ") and not answer.startswith(b"HTTP/1.1 101")  # no WebSocket is opened
    assert b"sekrit-value" not in out + err
