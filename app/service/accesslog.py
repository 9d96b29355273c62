"""JSON access logs: one line per request, without query strings or bodies.

Policy: URLs people check can carry keys (in the path or the query of the *target*, which
travels in the body or in ``?url=``), and a client can put anything in a request path, so the
log keeps only the method, the route path when it is one of the app's routes (else
``<unmatched>``), the status, the duration and the client IP. No query string, no body, no
headers.
"""

from __future__ import annotations

import functools
import json
import logging
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.logs import LineHandler

logger = logging.getLogger("mcp_sonde.access")


_LINE = '{{"method":{method},"path":{path},"status":{status},"ms":{ms},"client":{client}}}'


@functools.lru_cache(maxsize=1024)
def _json(value: str | None) -> str:
    """A JSON string (or ``null``), remembered: methods, route paths and client addresses repeat."""
    return json.dumps(value)


class AccessLogger:
    """Writes the access line of one request (used by :class:`AccessLog` and by fast paths before it)."""

    def __init__(self, paths: frozenset[str] = frozenset()) -> None:
        self.paths = paths

    def write(self, scope: Scope, status: int, started: float) -> None:
        """Log one request (``started``: its ``time.perf_counter()`` at arrival)."""
        if logger.isEnabledFor(logging.INFO):
            client = scope.get("client")
            path = scope["path"] if scope["path"] in self.paths else "<unmatched>"
            text = _LINE.format(
                method=_json(scope["method"]),
                path=_json(path),
                status=int(status),
                ms=round((time.perf_counter() - started) * 1000, 1),
                client=_json(client[0] if client else None),
            )
            handlers = logger.handlers
            if len(handlers) == 1 and isinstance(handlers[0], LineHandler) and not logger.propagate:
                handlers[0].write_line(text)  # what logger.info would do, without building a record
            else:
                logger.info(text)


class AccessLog:
    """ASGI middleware writing one JSON line per HTTP request to the ``mcp_sonde.access`` logger."""

    def __init__(self, app: ASGIApp, paths: frozenset[str] = frozenset()) -> None:
        self.app = app
        self.logger = AccessLogger(paths)

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
            self.logger.write(scope, status, started)
