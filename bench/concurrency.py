"""Benchmark: 1,000 concurrent full probes in one process against a local server that answers after 1 s.

The server (``bench/slow_server.py``, a separate process) holds every ``server/discover`` for
1 s, then answers ``tools/list`` at once, so a perfect client finishes in just over 1 s of
wall time. Prints wall time, peak RSS of this process, and the number of probes that did not
return ``ok``. Goal: wall under 1.5 s, peak RSS under 150 MB, no errors.

Baseline, in the same run and before the probes: the floor of the same traffic on this host,
``N`` concurrent clients of a few lines each on asyncio streams sending the probe's three
requests (``server/discover``, ``tools/list``, a ``tools/call``) on one connection, reading
each answer by its ``Content-Length`` and judging nothing. The wall time beyond the server's
delay follows the host's speed (the same commit took 1.85 s and 3.9 s on two days), so the
figure the regression guard holds is the ratio of the probes' time beyond the delay to the
floor's.

Usage: ``python -m bench.concurrency [N] [DELAY_S]`` (defaults 1000 and 1.0).
"""

from __future__ import annotations

import asyncio
import json
import logging
import resource
import subprocess
import sys
import time
from collections import Counter

import anyio

from app.probe import probe
from app.settings import Settings
from tests.servers.ports import free_port, wait_listening


async def run(n: int, delay_s: float, port: int) -> tuple[float, Counter[str]]:
    """Run ``n`` probes at once; return wall seconds and the status counts."""
    settings = Settings(allow_private=True, probe_timeout_s=15.0)
    url = f"http://127.0.0.1:{port}/mcp"
    statuses: Counter[str] = Counter()

    async def one() -> None:
        result = await probe(url, settings=settings)
        statuses[f"{result.status}/{result.reason}"] += 1

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for _ in range(n):
            group.start_soon(one)
    return time.perf_counter() - started, statuses


def _post(port: int, message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def floor(n: int, port: int) -> float:
    """Wall seconds of ``n`` concurrent bare clients doing the probe's three exchanges (see the module docs)."""
    requests = [
        _post(port, {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}),
        _post(port, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}),
        _post(port, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "x", "arguments": {}}}),
    ]

    async def one() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            for request in requests:
                writer.write(request)
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length:", 1)[1].split(b"\r\n", 1)[0])
                await reader.readexactly(length)
        finally:
            writer.close()

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for _ in range(n):
            group.start_soon(one)
    return time.perf_counter() - started


def main() -> None:
    """Print the figures."""
    logging.disable(logging.WARNING)
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    delay_s = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "bench.slow_server", str(port), str(delay_s)])
    try:
        wait_listening(port, server)
        floor_s = anyio.run(floor, n, port)
        wall, statuses = anyio.run(run, n, delay_s, port)
    finally:
        server.terminate()
        server.wait(timeout=10)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    errors = n - statuses.get("ok/ok", 0)
    print(f"concurrency benchmark: {n} concurrent full probes, server delay {delay_s} s")
    print(f"  wall        {wall:.2f} s   (goal < 1.5 s)")
    print(f"  floor       {floor_s:.2f} s   (bare clients, the same three exchanges)")
    beyond = (wall - delay_s) / max(floor_s - delay_s, 0.01)
    print(f"  ratio beyond the delay, probes/floor   {beyond:.2f}")
    print(f"  peak RSS    {peak_mb:.0f} MB   (goal < 150 MB)")
    print(f"  errors      {errors}   {dict(statuses)}")


if __name__ == "__main__":
    main()
