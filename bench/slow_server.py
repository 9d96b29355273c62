"""A minimal MCP (2026-07-28) server on loopback that answers ``server/discover`` after a delay.

Run as ``python -m bench.slow_server PORT DELAY_S``. Plain asyncio streams, HTTP/1.1 keep-alive,
JSON replies; ``tools/list`` is answered at once. Used by ``bench/concurrency.py``.
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys

DISCOVER = {
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {}},
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "slow", "version": "1"}},
    "resultType": "complete",
    "ttlMs": 0,
    "cacheScope": "public",
}
TOOLS = {
    "tools": [{"name": "t", "inputSchema": {"type": "object"}}],
    "resultType": "complete",
    "ttlMs": 0,
    "cacheScope": "public",
}


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay_s: float) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            message = json.loads(await reader.readexactly(length)) if length else {}
            method = message.get("method")
            if method == "server/discover":
                await asyncio.sleep(delay_s)
            result = DISCOVER if method == "server/discover" else TOOLS
            body = json.dumps({"jsonrpc": "2.0", "id": message.get("id"), "result": result}).encode()
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(body) + body
            )
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError, ValueError):
        pass
    finally:
        writer.close()


async def main(port: int, delay_s: float) -> None:
    server = await asyncio.start_server(lambda r, w: handle(r, w, delay_s), "127.0.0.1", port, backlog=4096)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    asyncio.run(main(int(sys.argv[1]), float(sys.argv[2])))
