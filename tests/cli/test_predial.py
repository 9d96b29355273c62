"""``mcp-sonde check`` dials its target while it imports the probe (app.cli.predial,
app.net.predialled): only a target the guard clears is dialled, the probe takes that very
connection, and one the server closed meanwhile is replaced by a fresh dial."""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import time

import anyio

from app.cli.codes import EXIT_REFUSED
from app.cli.predial import Predial, start
from app.net.predialled import PreDialled
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MCP_SONDE_")} | (env or {})
    command = [sys.executable, "-m", "app", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False, env=clean)


def test_a_target_the_guard_refuses_is_never_dialled_early() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
        completed = run_cli("check", url, "--json")
        waiting, _, _ = select.select([listener], [], [], 0)
    assert completed.returncode == EXIT_REFUSED
    assert json.loads(completed.stdout)["error"]["reason"] == "scheme_not_https"
    assert waiting == []  # (the process has ended: no connection can still come)


def test_the_probe_takes_the_early_connection_instead_of_a_second_one(raw: RawServer) -> None:
    raw.routes["/mcp"] = MiniMcp()
    early = run_cli("check", raw.url("/mcp"), "--allow-private", "--json")
    with_early, raw.connections = raw.connections, 0
    # The switch from the environment, not the flag: the early dial (which reads the flag) stays off.
    late = run_cli("check", raw.url("/mcp"), "--json", env={"MCP_SONDE_ALLOW_PRIVATE": "true"})
    assert (early.returncode, late.returncode) == (0, 0), early.stderr + late.stderr
    assert json.loads(early.stdout)["status"] == json.loads(late.stdout)["status"] == "ok"
    assert with_early == raw.connections >= 1


def test_an_early_connection_the_server_closed_is_replaced_by_a_fresh_dial() -> None:
    async def main() -> tuple[bytes, bool]:
        with socket.create_server(("127.0.0.1", 0)) as listener:
            port = listener.getsockname()[1]
            early = socket.create_connection(("127.0.0.1", port))
            listener.accept()[0].close()  # the server drops the idle connection before the probe uses it
            deadline = time.monotonic() + 30
            while select.select([early], [], [], 0.05)[0] == [] and time.monotonic() < deadline:
                pass
            backend = PreDialled(early, "127.0.0.1", port)
            sock = await backend.connect_tcp("127.0.0.1", port, timeout=10)
            served, _ = listener.accept()
            with served, sock:
                served.sendall(b"fresh")
                with anyio.fail_after(10):
                    await anyio.wait_readable(sock)
                answer = sock.recv(5)
            return answer, backend.taken

    answer, taken = anyio.run(main)
    assert (answer, taken) == (b"fresh", False)


def test_the_early_socket_is_only_for_its_own_address_and_is_closed_when_unused() -> None:
    async def main() -> tuple[bool, int]:
        with socket.create_server(("127.0.0.1", 0)) as listener:
            port = listener.getsockname()[1]
            early = socket.create_connection(("127.0.0.1", port))
            backend = PreDialled(early, "127.0.0.2", port)  # (dialled to another address than asked for)
            sock = await backend.connect_tcp("127.0.0.1", port, timeout=10)
            sock.close()
            return backend.taken, early.fileno()

    taken, fileno = anyio.run(main)
    assert taken is False and fileno == -1  # dialled afresh; the early socket closed, not leaked


def test_a_dial_for_another_url_or_switch_is_closed_not_taken() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
        dial = Predial(url, allow_private=True)
        dial._thread.join(30)
        assert dial.take(url + "x", True) is None
        second = Predial(url, allow_private=True)
        second._thread.join(30)
        taken = second.take(url, True)
        assert taken is not None and taken.sock.fileno() != -1
        taken.sock.close()


def test_only_a_command_line_the_loop_understands_is_dialled_early() -> None:
    understood = start(
        ["--header", "Authorization: Bearer x", "--timeout", "5", "https://mcp.example.test/mcp", "--json"]
    )
    assert understood is not None and understood.url == "https://mcp.example.test/mcp"
    assert understood.allow_private is False
    for unknown in (["--allow", "http://127.0.0.1:9/mcp"], ["a", "b"], ["--", "http://127.0.0.1:9/mcp"], []):
        assert start(unknown) is None, unknown
