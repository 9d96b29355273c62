"""Cached badge hits answered at the edge of the app, without the framework's layers.

Policy: README views make badge hits the service's most frequent requests by far, and every
one is the same few steps: a cache lookup and a drawn badge. A ``GET`` of ``/badge/mcp`` or
``/badge/mcp.json`` that carries no ``Origin`` (images and camo never send one) and whose
answer needs no probe (a cache hit, or a URL the guard refuses) is answered here with exactly
the status, headers and body the route gives (:func:`app.http.badges.drawing.answer`), and logged
by the same access log. Everything else (a miss, which is limited and probed; the PNG; a
cross-origin request, whose CORS headers the middleware adds) goes down the stack as before.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Mapping
from types import MappingProxyType
from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Receive, Scope, Send

from app.checking.clients import Network
from app.http.badges import drawing as badge
from app.http.badges.route import BadgeService
from app.http.edge import arrived_on
from app.http.middleware.accesslog import AccessLogger
from app.http.middleware.requestid import GIVEN, HEADER, request_id_of
from app.logs import REQUEST_ID

logger = logging.getLogger(__name__)


#: Query strings remembered parsed (README views repeat the same few badge URLs); with the bound
#: below, what is remembered takes at most about 512 x 16 kB.
_QUERIES = 512
#: Longest query string remembered: a badge's ``url`` is at most 2,048 characters (``url_too_long``),
#: percent-encoded at most three times that, and a style; longer ones are parsed each time.
_REMEMBERED_BYTES = 8 * 1024


def _query(raw: bytes) -> Mapping[str, str]:
    """The fields a badge reads (``url``, ``style``; the last of a repeated name) of a query string;
    short strings parsed once per distinct string, and only those two fields kept."""
    return _remembered(raw) if len(raw) <= _REMEMBERED_BYTES else _parsed(raw)


def _parsed(raw: bytes) -> Mapping[str, str]:
    fields = dict(parse_qsl(raw.decode("latin-1"), keep_blank_values=True))
    return MappingProxyType({name: fields[name] for name in _READ if name in fields})


_READ = ("url", "style")


_remembered = functools.lru_cache(maxsize=_QUERIES)(_parsed)


class BadgeHits:
    """ASGI middleware answering cached SVG and JSON badges (see the module docs).

    It is the app's outermost layer (:mod:`app.http.edge`), so it gives its answers their
    request id itself (and hands the id to :class:`~app.http.middleware.requestid.RequestIds`
    when the stack answers), leaves requests to the metrics port alone, and never lets an error
    escape: a failure before the answer started hands the request to the stack, whose
    route answers it (with a problem document, when it fails there too).
    """

    def __init__(
        self,
        app: ASGIApp,
        badges: BadgeService,
        access: AccessLogger,
        trusted: tuple[Network, ...] = (),
        metrics_port: int | None = None,
    ) -> None:
        self.app = app
        self.badges = badges
        self.access = access
        self.trusted = trusted
        self.metrics_port = metrics_port

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path")
        if scope["type"] != "http" or path not in _PATHS or scope["method"] != "GET":
            await self.app(scope, receive, send)
            return
        if arrived_on(scope, self.metrics_port):
            await self.app(scope, receive, send)  # (the metrics port answers /metrics alone)
            return
        started = time.perf_counter()
        tags = []
        for name, value in scope["headers"]:
            if name == b"origin":
                await self.app(scope, receive, send)  # CORS headers are the middleware's
                return
            if name == b"if-none-match":
                tags.append(value.decode("latin-1"))
        request_id = request_id_of(scope, self.trusted)
        token = REQUEST_ID.set(request_id)  # (for the access line, and a stale badge's refresh task)
        try:
            try:
                answer = await self._answer(path, _query(scope["query_string"]), tags)
            except Exception:
                logger.warning("badge fast path failed; the route answers", exc_info=True)
                answer = None
            if answer is None:  # a miss (limited and probed by the route), or a failure: the stack answers
                scope[GIVEN] = request_id
                await self.app(scope, receive, send)
                return
            status, headers, content = answer
            try:
                headers = (*headers, (HEADER, request_id.encode()))
                await send({"type": "http.response.start", "status": status, "headers": headers})
                await send({"type": "http.response.body", "body": content})
            finally:
                self.access.write(scope, status, started)
        finally:
            REQUEST_ID.reset(token)

    async def _answer(
        self, path: str, query: Mapping[str, str], tags: list[str]
    ) -> tuple[int, tuple[tuple[bytes, bytes], ...], bytes] | None:
        url = query.get("url", "")
        found = await self.badges.lookup(url, count_miss=False)
        if not isinstance(found, tuple):
            return None
        state, modified = found
        label = self.badges.label_for(url)
        if path == "/badge/mcp":
            body, etag = badge.svg_of(state, query.get("style", "flat"), label)
            media_type = badge.SVG_TYPE
        else:
            body, etag = badge.json_of(state, label)
            media_type = "application/json"
        fresh = badge.not_modified(badge.if_none_match(tags), etag)
        return badge.answer(body, etag, media_type, state, modified, fresh)


_PATHS = frozenset({"/badge/mcp", "/badge/mcp.json"})
