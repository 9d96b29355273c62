"""The client side of the link benchmark (:mod:`bench.link`), run inside the client namespace.

Runs one client N times against one URL, a pause between runs, and prints one JSON line per
run: ``start`` (before anything is sent), ``result`` (when the verdict was final: for
mcp-sonde when the session end starts, or when ``probe()`` returned where there is none; for
the ``mcp`` SDK client when its last call returned, before the context closes), ``end``, and
what the client saw. Times are ``time.time()``, the clock the capture stamps packets with.

Usage: ``python -m bench.link_client {sonde|sdk} URL N [--sse] [--ca PEM]``.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from typing import Any

import anyio

REFUSAL_TOOL = "__mcp_sonde_probe_nonexistent_tool__"
PAUSE_S = 0.6


async def _sonde(url: str, ca: str | None) -> tuple[float | None, str]:
    from app.probe.runner import observe
    from app.settings import Settings

    settings = Settings(allow_private=True, ca_bundle=ca)
    result_at: list[float] = []

    def observer(step: str) -> None:
        if step == "session/end":
            result_at.append(time.time())

    observation = await observe(url, settings=settings, observer=observer)
    result = observation.result
    refusal = observation.evidence.refusal
    seen = f"{result.status}/{result.reason} tools={result.tools.count if result.tools else None}"
    seen += f" refusal={refusal.kind if refusal else None}"
    return (result_at[0] if result_at else None), seen


async def _sdk(url: str, sse: bool) -> tuple[float | None, str]:
    from mcp import Client, ClientSession
    from mcp.client.sse import sse_client

    if sse:
        async with sse_client(url) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            refusal = await _refusal(session)
            return time.time(), f"tools={len(tools.tools)} refusal={refusal}"
    async with Client(url) as client:
        tools = await client.list_tools()
        refusal = await _refusal(client)
        return time.time(), f"tools={len(tools.tools)} refusal={refusal}"


async def _refusal(session: Any) -> str:
    try:
        outcome = await session.call_tool(REFUSAL_TOOL, {})
    except Exception as exc:  # the SDK raises its own error type for a JSON-RPC error
        return type(exc).__name__
    return "isError" if outcome.is_error else "success"


async def run(client: str, url: str, n: int, sse: bool, ca: str | None) -> None:
    """Run ``n`` checks, printing a JSON line per run."""
    for _ in range(n):
        started = time.time()
        if client == "sonde":
            result_at, seen = await _sonde(url, ca)
        else:
            result_at, seen = await _sdk(url, sse)
        ended = time.time()
        print(json.dumps({"start": started, "result": result_at or ended, "end": ended, "seen": seen}), flush=True)
        await anyio.sleep(PAUSE_S)


def main() -> None:
    """Parse arguments and run."""
    parser = argparse.ArgumentParser()
    parser.add_argument("client", choices=["sonde", "sdk"])
    parser.add_argument("url")
    parser.add_argument("n", type=int)
    parser.add_argument("--sse", action="store_true", help="the SDK client speaks legacy HTTP+SSE")
    parser.add_argument("--ca", help="PEM file of the test CA")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    anyio.run(run, args.client, args.url, args.n, args.sse, args.ca)


if __name__ == "__main__":
    main()
