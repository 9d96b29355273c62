"""Benchmark: start-up of ``mcp-sonde check`` (to its first packet) and of ``mcp-sonde serve``
(to ``/healthz`` and to ``/readyz``).

``check``: a listener on loopback records when the CLI's connection arrives (the SYN is the
probe's first packet; the connection is then closed, so the check ends at once). Median of
repeats, beside the baseline: the bare interpreter opening the same connection (``python -c``
with ``socket``). Goal: under 100 ms before the first packet.

``serve``: from spawning it on the embedded defaults to the first 200 of ``/healthz`` and of
``/readyz`` (polled every 10 ms), on a new data directory (a first start: the key is made, the
SQLite file migrated) and again on the same one, median of repeats, beside the baseline: a bare
Starlette app answering ``/healthz`` under uvicorn, started the same way. Goal: ready within 2 s.

Usage: ``python -m bench.startup [N]`` (default 10; the serve figures take N // 2 + 1 starts each).
"""

from __future__ import annotations

import contextlib
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2

from tests.servers.ports import free_port

BIN = Path(sys.executable).parent


def first_packet_ms(command: list[str], listener: socket.socket) -> float:
    """Milliseconds from spawning ``command`` to its connection arriving at ``listener``."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    connection, _ = listener.accept()
    arrived = time.perf_counter()
    connection.close()
    listener.settimeout(0.05)
    while process.poll() is None:  # later connections of the same check (its one retry) are closed too
        with contextlib.suppress(TimeoutError):
            listener.accept()[0].close()
    listener.settimeout(30)
    return (arrived - started) * 1000


BARE = """
import sys, uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
app = Starlette(routes=[Route("/healthz", lambda request: JSONResponse({"status": "ok"}))])
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


def answered_s(command: list[str], port: int, paths: tuple[str, ...], env: dict[str, str]) -> dict[str, float]:
    """Seconds from spawning ``command`` to the first 200 of each of ``paths`` on ``port``."""
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen: dict[str, float] = {}
    try:
        with httpx2.Client(timeout=5) as client:
            while len(seen) < len(paths):
                for path in paths:
                    if path not in seen:
                        with contextlib.suppress(httpx2.HTTPError):
                            if client.get(f"http://127.0.0.1:{port}{path}").status_code == 200:
                                seen[path] = time.perf_counter() - started
                assert process.poll() is None, "the server exited"
                time.sleep(0.01)
    finally:
        process.terminate()
        process.wait(30)
    return seen


def serve_figures(n: int) -> None:
    """Print ``serve``'s start-up beside a bare uvicorn app's."""
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "MCP_SONDE_REDIS_URL")}
    env.pop("MCP_SONDE_DATABASE_URL", None)
    first, again, bare = [], [], []
    for _ in range(n):
        with tempfile.TemporaryDirectory() as data:
            port = free_port()
            command = [str(BIN / "mcp-sonde"), "serve", "--port", str(port)]
            paths = ("/healthz", "/readyz")
            first.append(answered_s(command, port, paths, env | {"MCP_SONDE_DATA_DIR": data}))
            again.append(answered_s(command, port, paths, env | {"MCP_SONDE_DATA_DIR": data}))
        port = free_port()
        bare.append(answered_s([sys.executable, "-c", BARE, str(port)], port, ("/healthz",), env)["/healthz"])
    base = statistics.median(bare)
    print(f"start-up benchmark: spawn to the first 200, median of {n}")
    print(f"  bare uvicorn app  /healthz {base * 1000:7.0f} ms")
    for name, runs in (("first start", first), ("restart", again)):
        health = statistics.median(r["/healthz"] for r in runs)
        ready = statistics.median(r["/readyz"] for r in runs)
        print(f"  serve, {name:11} /healthz {health * 1000:7.0f} ms (ratio {health / base:.2f})   "
              f"/readyz {ready * 1000:7.0f} ms (ratio {ready / base:.2f}; goal < 2000 ms)")  # fmt: skip


def main() -> None:
    """Print the figures."""
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(30)
        port = listener.getsockname()[1]
        cli = [str(BIN / "mcp-sonde"), "check", "--allow-private", f"http://127.0.0.1:{port}/mcp"]
        bare = [sys.executable, "-c", f"import socket; socket.create_connection(('127.0.0.1', {port})).close()"]
        os.environ.pop("PYTHONPROFILEIMPORTTIME", None)
        first_packet_ms(cli, listener)  # warm the page cache and the bytecode
        ours = statistics.median(first_packet_ms(cli, listener) for _ in range(n))
        base = statistics.median(first_packet_ms(bare, listener) for _ in range(n))
    print(f"start-up benchmark: spawn to first packet, median of {n}")
    print(f"  mcp-sonde check   {ours:7.1f} ms   (goal < 100 ms)")
    print(f"  bare python       {base:7.1f} ms   (ratio {ours / base:.2f})")
    serve_figures(n // 2 + 1)


if __name__ == "__main__":
    main()
