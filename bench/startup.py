"""Benchmark: start-up of ``mcp-sonde check`` (to its first packet) and of ``mcp-sonde serve``
(to ``/healthz`` and to ``/readyz``).

``check``: a listener on loopback records when the CLI's connection arrives (the SYN is the
probe's first packet; the connection is then closed, so the check ends at once). Median of
repeats, beside the baseline: the bare interpreter opening the same connection (``python -c``
with ``socket``), with the project's bytecode cached (``PYTHONPYCACHEPREFIX``, a directory filled by a first
run) and without (``PYTHONDONTWRITEBYTECODE`` set, as on these machines, after the
project's own ``__pycache__`` directories are removed; the interpreter's and the installed
packages' bytecode stays, as an install leaves it). Goal:
under 100 ms before the first packet, both ways.

``worker`` and ``scheduler``: from spawning them on the test Redis (``MCP_SONDE_TEST_REDIS_URL``,
else ``redis://127.0.0.1:6379/15``) and a migrated SQLite history to their ``started`` log line.

``serve``: from spawning it on the embedded defaults to the first 200 of ``/healthz`` and of
``/readyz`` (polled every 10 ms), on a new data directory (a first start: the key is made, the
SQLite file migrated) and again on the same one, median of repeats, beside the baseline: a bare
Starlette app answering ``/healthz`` under uvicorn, started the same way. Goal: ready within 2 s.

Usage: ``python -m bench.startup [N] [--first-packet]`` (default 10; the serve figures take N // 2 + 1 starts
each; ``--first-packet``: the CLI figures alone).
"""

from __future__ import annotations

import contextlib
import os
import shutil
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
ROOT = Path(__file__).resolve().parent.parent


def first_packet_ms(command: list[str], listener: socket.socket, env: dict[str, str] | None = None) -> float:
    """Milliseconds from spawning ``command`` to its connection arriving at ``listener``."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
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


def started_s(command: list[str], line: str, env: dict[str, str]) -> float:
    """Seconds from spawning ``command`` to ``line`` in what it writes (stderr)."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=err)
        try:
            while True:
                err.seek(0)
                if line.encode() in err.read():
                    return time.perf_counter() - started
                assert process.poll() is None, f"{command[1]} exited"
                time.sleep(0.01)
        finally:
            process.terminate()
            process.wait(30)


def jobs_figures(n: int) -> None:
    """Print the worker's and the scheduler's start-up."""
    with tempfile.TemporaryDirectory() as data:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_SONDE_")} | {
            "REDIS_URL": os.environ.get("MCP_SONDE_TEST_REDIS_URL", "redis://127.0.0.1:6379/15"),
            "MCP_SONDE_DATA_DIR": data,
            "MCP_SONDE_DATABASE_URL": f"sqlite+aiosqlite:///{data}/history.sqlite3",
            "MCP_SONDE_JOBS_QUEUE": f"bench-{os.getpid()}",
            "MCP_SONDE_REDIS_NAMESPACE": f"bench-{os.getpid()}",
        }
        subprocess.run([str(BIN / "mcp-sonde"), "db", "upgrade"], env=env, check=True, capture_output=True)
        subprocess.run([str(BIN / "mcp-sonde"), "keys", "new"], env=env, check=True, capture_output=True)
        print(f"start-up benchmark: spawn to the started line, median of {n}")
        for name in ("worker", "scheduler"):
            figure = statistics.median(
                started_s([str(BIN / "mcp-sonde"), name], f"{name} started", env) for _ in range(n)
            )
            print(f"  mcp-sonde {name:9} {figure * 1000:7.0f} ms   (goal < 2000 ms)")


def check_figures(n: int) -> None:
    """Print ``check``'s first packet, with and without the project's bytecode cached."""
    with socket.create_server(("127.0.0.1", 0)) as listener, tempfile.TemporaryDirectory() as caches:
        listener.settimeout(30)
        port = listener.getsockname()[1]
        cli = [str(BIN / "mcp-sonde"), "check", "--allow-private", f"http://127.0.0.1:{port}/mcp"]
        bare = [sys.executable, "-c", f"import socket; socket.create_connection(('127.0.0.1', {port})).close()"]
        os.environ.pop("PYTHONPROFILEIMPORTTIME", None)
        cached = os.environ | {"PYTHONPYCACHEPREFIX": f"{caches}/filled"}
        first_packet_ms(cli, listener, cached | {"PYTHONDONTWRITEBYTECODE": ""})  # fill that cache, warm the page cache
        for stale in [*ROOT.glob("app/**/__pycache__"), *ROOT.glob("badges/**/__pycache__")]:
            shutil.rmtree(stale, ignore_errors=True)
        uncached = {k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"} | {
            "PYTHONDONTWRITEBYTECODE": "1"
        }
        with_cache = statistics.median(first_packet_ms(cli, listener, cached) for _ in range(n))
        without = statistics.median(first_packet_ms(cli, listener, uncached) for _ in range(n))
        base = statistics.median(first_packet_ms(bare, listener) for _ in range(n))
    print(f"start-up benchmark: spawn to first packet, median of {n}")
    print(
        f"  mcp-sonde check, bytecode cached      {with_cache:7.1f} ms   (goal < 100 ms; ratio {with_cache / base:.2f})"
    )
    print(f"  mcp-sonde check, no bytecode cached   {without:7.1f} ms   (goal < 100 ms; ratio {without / base:.2f})")
    print(f"  bare python                           {base:7.1f} ms")


def main() -> None:
    """Print the figures."""
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    check_figures(n)
    if "--first-packet" in sys.argv:  # (the regression guard's figure alone)
        return
    serve_figures(n // 2 + 1)
    jobs_figures(n // 2 + 1)


if __name__ == "__main__":
    main()
