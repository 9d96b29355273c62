"""Benchmark: requests per second of a cached badge against a bare Starlette route with a fixed SVG.

The service runs as ``mcp-sonde serve`` as configured for production (one worker, its JSON
access log on, written to a file as a log collector would take it); the baseline is a bare
Starlette route under uvicorn (no access log). One load generator drives each in turn: wrk
(Debian's package) for D seconds with C connections when it is installed, else an httpx2
client in this process (which may itself be the bottleneck; the output says which ran). The
badge is warmed first, so every timed request is a cache hit: rendering, cache lookup,
headers and the access log are what is measured. Goal: the cached badge at 75 %
or more of the bare route. Prints both rates and the ratio.

Usage: ``python -m bench.badge [N_OR_SECONDS] [C]`` (defaults: 5 s with wrk, or 3000 requests; 32).
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO
from urllib.parse import quote

import anyio
import httpx2

from tests.servers.ports import free_port, wait_listening, wait_ready


def _serve_bare(port: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "uvicorn", "bench.badge_apps:bare", "--factory", "--port", str(port)]
    command += ["--no-access-log", "--log-level", "warning"]
    return subprocess.Popen(command, env=os.environ.copy())


def _serve_sonde(port: int, log: IO[bytes]) -> subprocess.Popen[bytes]:
    """``mcp-sonde serve`` as in production, allowed to reach the loopback target, misses unlimited."""
    command = [str(Path(sys.executable).parent / "mcp-sonde"), "serve", "--allow-private", "--port", str(port)]
    env = os.environ | {"MCP_SONDE_BADGE_RATE_LIMIT": "1000000/minute", "MCP_SONDE_REDIS_URL": ""}
    return subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.DEVNULL)


async def _rate(url: str, n: int, concurrency: int) -> float:
    async with httpx2.AsyncClient(limits=httpx2.Limits(max_connections=concurrency), timeout=30) as client:
        for _ in range(50):
            assert (await client.get(url)).status_code == 200
        left = n
        started = time.perf_counter()

        async def worker() -> None:
            nonlocal left
            while left > 0:
                left -= 1
                response = await client.get(url)
                assert response.status_code == 200

        async with anyio.create_task_group() as group:
            for _ in range(concurrency):
                group.start_soon(worker)
        return n / (time.perf_counter() - started)


def _wrk_rate(url: str, seconds: int, concurrency: int) -> float:
    """Requests per second that wrk measured (threads: 2, this machine's cores)."""
    completed = subprocess.run(
        ["wrk", "-t2", f"-c{concurrency}", f"-d{seconds}s", url], capture_output=True, text=True, check=True
    )
    for line in completed.stdout.splitlines():
        if line.startswith("Requests/sec:"):
            return float(line.split(":", 1)[1])
    raise RuntimeError(completed.stdout)


def main() -> None:
    """Print the figures."""
    logging.disable(logging.WARNING)
    wrk = shutil.which("wrk") is not None
    n = int(sys.argv[1]) if len(sys.argv) > 1 else (5 if wrk else 3000)
    concurrency = int(sys.argv[2]) if len(sys.argv) > 2 else 32
    with tempfile.TemporaryFile() as log:
        bare_rate, sonde_rate = _measure(wrk, n, concurrency, log)
    load = f"wrk, {n} s each" if wrk else f"httpx2 client, {n} requests each"
    print(f"badge benchmark: {load}, {concurrency} connections, one uvicorn worker per app")
    print(f"  bare Starlette route, fixed SVG                     {bare_rate:8.0f} req/s")
    print(f"  cached /badge/mcp (mcp-sonde serve, access log on)  {sonde_rate:8.0f} req/s")
    print(f"  ratio cached/bare                                   {sonde_rate / bare_rate:8.2f}   (goal >= 0.75)")


def _measure(wrk: bool, n: int, concurrency: int, log: IO[bytes]) -> tuple[float, float]:
    target_port, bare_port, sonde_port = free_port(), free_port(), free_port()
    target = subprocess.Popen([sys.executable, "-m", "bench.slow_server", str(target_port), "0"])
    bare, sonde = _serve_bare(bare_port), _serve_sonde(sonde_port, log)
    try:
        for port, process in ((target_port, target), (bare_port, bare), (sonde_port, sonde)):
            wait_listening(port, process)
        wait_ready(sonde_port, sonde)
        url = quote(f"http://127.0.0.1:{target_port}/mcp", safe="")
        warm = httpx2.get(f"http://127.0.0.1:{sonde_port}/badge/mcp?url={url}", timeout=30)
        assert warm.headers["x-badge-state"] == "ok", warm.headers
        urls = (f"http://127.0.0.1:{bare_port}/badge/mcp", f"http://127.0.0.1:{sonde_port}/badge/mcp?url={url}")
        if wrk:
            bare_rate, sonde_rate = (_wrk_rate(u, n, concurrency) for u in urls)
        else:
            bare_rate, sonde_rate = (anyio.run(_rate, u, n, concurrency) for u in urls)
    finally:
        for process in (sonde, bare, target):
            process.terminate()
            process.wait(timeout=10)
    return bare_rate, sonde_rate


if __name__ == "__main__":
    main()
