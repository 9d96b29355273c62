"""Benchmark: the client CPU one full check costs, against the ``mcp`` SDK client doing the same work.

Measured (this process's CPU, ``time.process_time``, never wall time): N sequential runs of
:func:`app.suite.full.full_check` (handshake, ``tools/list``, the refusal call, session end,
and every judge of the suite) and of :func:`app.probe.probe`, against an ``mcp`` SDK server in
a separate process (``/stateless-json``: no sessions, JSON replies). Baseline: ``mcp.Client``
(``mcp`` 2.3.0) doing the same protocol work (connect in auto mode, ``tools/list``, a call of
a tool that does not exist, close) on an httpx2 client whose SSL context is built once per
process, as ours is (a new client would load the trust store each time: CPU that is no
protocol work). Each figure is the median of R repeats; the ratio is ours over the SDK's.
Goal: a full check at most 1.0 ms of CPU.

Usage: ``python -m bench.cpu [N] [R]`` (defaults 200, 3).
"""

from __future__ import annotations

import logging
import statistics
import sys
import time
from collections.abc import Awaitable, Callable

import anyio

from app.probe import probe
from app.settings import Settings
from app.suite.full import full_check
from bench._servers import sdk_client, sdk_fixture_process

#: The goal, CPU milliseconds per full check.
GOAL_MS = 1.0


async def _cpu_ms(n: int, once: Callable[[], Awaitable[None]]) -> float:
    for _ in range(10):
        await once()
    started = time.process_time()
    for _ in range(n):
        await once()
    return (time.process_time() - started) / n * 1000


async def run(n: int, repeats: int) -> dict[str, float]:
    """Median CPU ms per run of each case."""
    settings = Settings(allow_private=True)
    samples: dict[str, list[float]] = {"full_check()": [], "probe()": [], "mcp SDK client": []}
    with sdk_fixture_process() as base:
        url = f"{base}/stateless-json/mcp"

        async def full() -> None:
            result = await full_check(url, settings=settings)
            assert result.status == "ok", result.reason

        async def bare() -> None:
            result = await probe(url, settings=settings)
            assert result.status == "ok", result.reason

        async def sdk() -> None:
            async with sdk_client(url, "auto") as client:
                assert (await client.list_tools()).tools
                refused = await client.call_tool("mcp-sonde-no-such-tool", {})
                assert refused.is_error

        cases = {"full_check()": full, "probe()": bare, "mcp SDK client": sdk}
        for _ in range(repeats):
            for name, once in cases.items():
                samples[name].append(await _cpu_ms(n, once))
    return {name: statistics.median(values) for name, values in samples.items()}


def main() -> None:
    """Print the figures."""
    logging.disable(logging.WARNING)
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    figures = anyio.run(run, n, repeats)
    sdk = figures["mcp SDK client"]
    print(f"cpu benchmark: client CPU ms per run, N={n} sequential, median of {repeats}, local mcp SDK server")
    for name, ms in figures.items():
        print(f"  {name:<16}{ms:8.3f} ms   ratio to the SDK client {ms / sdk:5.2f}")
    print(f"  goal: full_check() at most {GOAL_MS} ms")


if __name__ == "__main__":
    main()
