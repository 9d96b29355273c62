"""Access logs and HTTP metrics: one line and one count per request, without query strings or bodies.

Policy: URLs people check can carry keys (in the path or the query of the *target*, which
travels in the body or in ``?url=``), and a client can put anything in a request path, so the
log keeps only the method, the route path when it is one of the app's routes (else
``<unmatched>``), the status, the duration, the client IP and the request id. No query
string, no body, no headers. A JSON line has the keys every other log line has
(``timestamp``, RFC 3339 in UTC, as python-json-logger writes it; ``level``; ``logger``;
``request_id``), and is built here by string formatting rather than through a ``LogRecord``:
the badge route answers thousands of hits a second, and each one is logged.

The same place counts the request (:meth:`app.checking.metrics.Metrics.http_done`): by route
path (``other`` for a path that is no route, so scanners cannot add series), method and status.
"""

from __future__ import annotations

import functools
import json
import logging
import re
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.checking.clients import Network
from app.checking.metrics import Metrics
from app.http.middleware.clientip import scope_client_ip
from app.logs import REQUEST_ID, LineHandler

logger = logging.getLogger("mcp_sonde.access")


@functools.lru_cache(maxsize=1024)
def _json(value: str | None) -> str:
    """A JSON string (or ``null``), remembered: methods, route paths and client addresses repeat."""
    return json.dumps(value)


_second: list[tuple[int, str, str]] = [(-1, "", "")]


def _seconds(whole: int) -> tuple[int, str, str]:
    """The parts of both stamps up to the second (built once per second)."""
    cached = _second[0]
    if cached[0] != whole:
        utc = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))
        cached = (whole, utc, time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(whole)))
        _second[0] = cached
    return cached


def _utc_stamp(now: float) -> str:
    """``now`` as python-json-logger writes it (ISO 8601 in UTC with microseconds)."""
    whole = int(now)
    return f"{_seconds(whole)[1]}.{int((now - whole) * 1_000_000):06d}+00:00"


def _local_stamp(now: float) -> str:
    """``now`` as :class:`logging.Formatter` writes ``asctime`` (local time, milliseconds)."""
    whole = int(now)
    return f"{_seconds(whole)[2]},{int((now - whole) * 1_000_000) // 1000:03d}"


#: A path parameter as ``re.escape`` leaves it (``\\{name\\}``).
_PARAMETER = re.compile(r"\\\{[^}]*\\\}")


class AccessLogger:
    """Writes the access line of one request and counts it (used by :class:`AccessLog` and by fast paths before it).

    Args:
        paths: the app's route paths (anything else is logged as ``<unmatched>``).
        metrics: where requests are counted (none: not counted).
        plain: write the readable line of ``log_format=plain`` instead of JSON.
    """

    def __init__(
        self,
        paths: frozenset[str] = frozenset(),
        metrics: Metrics | None = None,
        plain: bool = False,
        trusted_proxies: tuple[Network, ...] = (),
    ) -> None:
        self.paths = frozenset(path for path in paths if "{" not in path)
        #: Routes with path parameters (``/problems/{reason}``, ``/v1/servers/{server_id}/history``), each
        #: parameter one segment, matched by one alternation whose group number names the template.
        self.templates = tuple(sorted(path for path in paths if "{" in path))
        pattern = "|".join(f"({_PARAMETER.sub('[^/]+', re.escape(path))})" for path in self.templates)
        self._templated = re.compile(pattern) if pattern else None
        self.metrics = metrics
        self.plain = plain
        self.trusted_proxies = trusted_proxies

    def route(self, path: str) -> str | None:
        """The route template ``path`` is answered by, ``None`` when it is no route."""
        if path in self.paths:
            return path
        found = self._templated.fullmatch(path) if self._templated is not None else None
        return self.templates[found.lastindex - 1] if found is not None and found.lastindex else None

    def write(self, scope: Scope, status: int, started: float) -> None:
        """Log and count one request (``started``: its ``time.perf_counter()`` at arrival)."""
        seconds = time.perf_counter() - started
        route = self.route(scope["path"])
        if self.metrics is not None:
            self.metrics.http_done(route or "other", scope["method"], int(status), seconds)
        if not logger.isEnabledFor(logging.INFO):
            return
        peer = scope.get("client")
        client = (scope_client_ip(scope, self.trusted_proxies),) if self.trusted_proxies and peer else peer
        request_id = REQUEST_ID.get()  # (a token of [A-Za-z0-9._:-]: nothing to escape)
        ms = round(seconds * 1000, 1)
        if self.plain:
            local = _local_stamp(time.time())
            text = (
                f"{local} INFO mcp_sonde.access [{request_id or '-'}] {scope['method']} "
                f"{route or '<unmatched>'} {int(status)} {ms} ms {client[0] if client else '-'}"
            )
        else:
            stamp = _utc_stamp(time.time())
            given = f'"request_id":"{request_id}",' if request_id is not None else ""
            text = (
                f'{{"timestamp":"{stamp}","level":"INFO","logger":"mcp_sonde.access",{given}'
                f'"method":{_json(scope["method"])},"path":{_json(route or "<unmatched>")},"status":{int(status)},'
                f'"ms":{ms},"client":{_json(client[0] if client else None)}}}'
            )
        handlers = logger.handlers
        if len(handlers) == 1 and isinstance(handlers[0], LineHandler) and not logger.propagate:
            handlers[0].write_line(text)  # what logger.info would do, without building a record
        else:
            logger.info(text)


class AccessLog:
    """ASGI middleware writing one line per HTTP request to the ``mcp_sonde.access`` logger (and counting it)."""

    def __init__(self, app: ASGIApp, access: AccessLogger) -> None:
        self.app = app
        self.logger = access

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
