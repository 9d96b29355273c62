"""JSON access logs: one line per request, without query strings or bodies.

Policy: URLs people check can carry keys (in the path or the query of the *target*, which
travels in the body or in ``?url=``), and a client can put anything in a request path, so the
log keeps only the method, the route path when it is one of the app's routes (else
``<unmatched>``), the status, the duration and the client IP. No query string, no body, no
headers.
"""

from __future__ import annotations

import json
import logging
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

logger = logging.getLogger("mcp_sonde.access")


class AccessLog:
    """ASGI middleware writing one JSON line per HTTP request to the ``mcp_sonde.access`` logger."""

    def __init__(self, app: ASGIApp, paths: frozenset[str] = frozenset()) -> None:
        self.app = app
        self.paths = paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def record(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, record)
        finally:
            if logger.isEnabledFor(logging.INFO):
                client = scope.get("client")
                line = {
                    "method": scope["method"],
                    "path": scope["path"] if scope["path"] in self.paths else "<unmatched>",
                    "status": status,
                    "ms": round((time.perf_counter() - started) * 1000, 1),
                    "client": client[0] if client else None,
                }
                logger.info(json.dumps(line, separators=(",", ":")))
