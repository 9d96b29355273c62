"""Benchmark: one full probe by mcp-sonde against the ``mcp`` SDK's own client doing the same work.

Baseline: ``mcp.Client`` (``mcp`` 2.3.0) connecting (``server/discover`` in auto mode, or
``initialize`` in legacy mode), listing tools and closing, on an httpx2 client whose SSL
context is built once per process as ours is (see :func:`bench._servers.sdk_client`).
mcp-sonde's :func:`app.probe.probe` does the handshake, ``tools/list`` and session end over the
same server. Both run N times sequentially against an ``mcp`` SDK server in a separate process; the script prints the
median milliseconds per probe and the ratio (mcp-sonde / SDK; below 1.0 means faster).

Usage: ``python -m bench.probe [N]`` (default N = 200).
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Literal

import anyio

from app.probe import probe
from app.settings import Settings
from bench._servers import sdk_client, sdk_fixture_process


async def _timed(n: int, once: Callable[[], Awaitable[None]]) -> list[float]:
    samples = []
    for _ in range(n):
        started = time.perf_counter()
        await once()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


async def run(n: int) -> list[tuple[str, float, float, float]]:
    """Return rows (case, sonde median ms, SDK median ms, ratio)."""
    settings = Settings(allow_private=True)
    rows = []
    with sdk_fixture_process() as base:
        cases: list[tuple[str, str, Literal["auto", "legacy"]]] = [
            ("modern (stateless JSON)", "stateless-json", "auto"),
            ("legacy (sessions, SSE)", "initialize-only", "legacy"),
        ]
        for label, mount, mode in cases:
            url = f"{base}/{mount}/mcp"

            async def sonde(url: str = url) -> None:
                result = await probe(url, settings=settings)
                assert result.status == "ok", result.reason

            async def sdk(url: str = url, mode: Literal["auto", "legacy"] = mode) -> None:
                async with sdk_client(url, mode) as client:
                    tools = await client.list_tools()
                    assert tools.tools

            for warm in (sonde, sdk):
                await _timed(5, warm)
            ours = statistics.median(await _timed(n, sonde))
            theirs = statistics.median(await _timed(n, sdk))
            rows.append((label, ours, theirs, ours / theirs))
    return rows


def main() -> None:
    """Print the table."""
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    rows = anyio.run(run, n)
    print(f"probe benchmark, N={n} sequential probes per side (median ms per probe)")
    print(f"{'case':<26}{'mcp-sonde':>12}{'mcp SDK':>12}{'ratio':>8}")
    for label, ours, theirs, ratio in rows:
        print(f"{label:<26}{ours:>12.2f}{theirs:>12.2f}{ratio:>8.2f}")


if __name__ == "__main__":
    main()
