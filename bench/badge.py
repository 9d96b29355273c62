"""Benchmark: requests per second of a cached badge against a bare Starlette route with a fixed SVG.

The service runs as ``mcp-sonde serve`` as configured for production (one worker, its JSON
access log on, written to a file as a log collector would take it); the baseline is a bare
Starlette route under uvicorn (no access log); both run uvicorn's httptools protocol, as
``serve`` does. One load generator drives each in turn: wrk (Debian's package) for D seconds
with C connections when it is installed, else an httpx2 client in this process (which may
itself be the bottleneck; the output says which ran). On a machine of two or more cores the
server under test runs on the first core and wrk on the second, so the generator never takes
the server's core (the output says so); on one core they share it. The badge is warmed first,
so every timed request is a cache hit: the cache lookup, the drawn badge's headers, the request
id, the metrics and the access log are what is measured. Each side is measured R times,
alternating, and the medians are compared. Goal: the cached badge at 90 % or more of the bare
route. Prints both rates, the ratio and, for reference, a bare route that sends the same
headers as the badge.

Usage: ``python -m bench.badge [N_OR_SECONDS] [C] [R]`` (defaults: 3 s with wrk, or 3000 requests; 32; 3).
"""

from __future__ import annotations

import logging
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO
from urllib.parse import quote

import anyio
import httpx2

from tests.servers.ports import free_port, wait_listening, wait_ready

#: Cores of the server under test and of the load generator (when the machine has two or more).
SERVER_CPU, LOAD_CPU = 0, 1
PINNED = len(os.sched_getaffinity(0)) >= 2 and {SERVER_CPU, LOAD_CPU} <= os.sched_getaffinity(0)


def _on(cpu: int) -> Callable[[], None] | None:
    """A ``preexec_fn`` putting the child on ``cpu`` alone (``None`` on a one-core machine)."""
    return (lambda: os.sched_setaffinity(0, {cpu})) if PINNED else None


def _serve_bare(port: int, factory: str = "bare") -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "uvicorn", f"bench.badge_apps:{factory}", "--factory", "--port", str(port)]
    command += ["--no-access-log", "--log-level", "warning", "--http", "httptools"]
    return subprocess.Popen(command, env=os.environ.copy(), preexec_fn=_on(SERVER_CPU))


def _serve_sonde(port: int, log: IO[bytes]) -> subprocess.Popen[bytes]:
    """``mcp-sonde serve`` as in production, allowed to reach the loopback target, misses unlimited."""
    command = [str(Path(sys.executable).parent / "mcp-sonde"), "serve", "--allow-private", "--port", str(port)]
    env = os.environ | {"MCP_SONDE_BADGE_RATE_LIMIT": "1000000/minute", "MCP_SONDE_REDIS_URL": ""}
    return subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.DEVNULL, preexec_fn=_on(SERVER_CPU))


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
    """Requests per second that wrk measured (one thread on its own core; every answer a 200)."""
    completed = subprocess.run(
        ["wrk", "-t1", f"-c{concurrency}", f"-d{seconds}s", url],
        capture_output=True, text=True, check=True, preexec_fn=_on(LOAD_CPU),
    )  # fmt: skip
    if "Non-2xx" in completed.stdout or "Socket errors" in completed.stdout:
        raise RuntimeError(f"wrk saw failed requests: {completed.stdout.strip().splitlines()[-3:]}")
    for line in completed.stdout.splitlines():
        if line.startswith("Requests/sec:"):
            return float(line.split(":", 1)[1])
    raise RuntimeError(completed.stdout)


def main() -> None:
    """Print the figures."""
    logging.disable(logging.WARNING)
    wrk = shutil.which("wrk") is not None
    n = int(sys.argv[1]) if len(sys.argv) > 1 else (3 if wrk else 3000)
    concurrency = int(sys.argv[2]) if len(sys.argv) > 2 else 32
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    with tempfile.TemporaryFile() as log:
        rates = _measure(wrk, n, concurrency, repeats, log)
    bare, headed, sonde = (statistics.median(rates[key]) for key in ("bare", "headed", "sonde"))
    load = f"wrk, {n} s each" if wrk else f"httpx2 client, {n} requests each"
    cores = "server on core 0, load on core 1" if PINNED else "server and load share the one core"
    print(f"badge benchmark: {load}, {concurrency} connections, median of {repeats}, one uvicorn worker each, {cores}")
    print(f"  bare Starlette route, fixed SVG                     {bare:8.0f} req/s")
    print(f"  bare route, fixed SVG with the badge's headers      {headed:8.0f} req/s")
    print(f"  cached /badge/mcp (mcp-sonde serve, access log on)  {sonde:8.0f} req/s")
    print(f"  ratio cached/bare                                   {sonde / bare:8.2f}   (goal >= 0.9)")


def _measure(wrk: bool, n: int, concurrency: int, repeats: int, log: IO[bytes]) -> dict[str, list[float]]:
    target_port, bare_port, headed_port, sonde_port = free_port(), free_port(), free_port(), free_port()
    target = subprocess.Popen([sys.executable, "-m", "bench.slow_server", str(target_port), "0"])
    bare, headed = _serve_bare(bare_port), _serve_bare(headed_port, "headed")
    sonde = _serve_sonde(sonde_port, log)
    rates: dict[str, list[float]] = {"bare": [], "headed": [], "sonde": []}
    try:
        for port, process in ((target_port, target), (bare_port, bare), (headed_port, headed)):
            wait_listening(port, process)
        wait_ready(sonde_port, sonde)
        url = quote(f"http://127.0.0.1:{target_port}/mcp", safe="")
        warm = httpx2.get(f"http://127.0.0.1:{sonde_port}/badge/mcp?url={url}", timeout=30)
        assert warm.headers["x-badge-state"] == "ok", warm.headers
        urls = {
            "bare": f"http://127.0.0.1:{bare_port}/badge/mcp",
            "headed": f"http://127.0.0.1:{headed_port}/badge/mcp",
            "sonde": f"http://127.0.0.1:{sonde_port}/badge/mcp?url={url}",
        }
        for _ in range(repeats):
            for key, address in urls.items():
                rate = _wrk_rate(address, n, concurrency) if wrk else anyio.run(_rate, address, n, concurrency)
                rates[key].append(rate)
    finally:
        for process in (sonde, headed, bare, target):
            process.terminate()
            process.wait(timeout=10)
    return rates


if __name__ == "__main__":
    main()
