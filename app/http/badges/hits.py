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

import time
from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Receive, Scope, Send

from app.http.badges import drawing as badge
from app.http.badges.route import BadgeService
from app.http.middleware.accesslog import AccessLogger


class BadgeHits:
    """ASGI middleware answering cached SVG and JSON badges (see the module docs)."""

    def __init__(self, app: ASGIApp, badges: BadgeService, access: AccessLogger) -> None:
        self.app = app
        self.badges = badges
        self.access = access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path")
        if scope["type"] != "http" or path not in ("/badge/mcp", "/badge/mcp.json") or scope["method"] != "GET":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        origin, tags = False, []
        for name, value in scope["headers"]:
            if name == b"origin":
                origin = True
            elif name == b"if-none-match":
                tags.append(value.decode("latin-1"))
        if origin:
            await self.app(scope, receive, send)
            return
        query = dict(parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True))
        status = 500
        try:
            found = await self.badges.lookup(query.get("url", ""), count_miss=False)
            if not isinstance(found, tuple):  # a miss: limited and probed by the route
                status = 0  # (logged by the access log below us)
                await self.app(scope, receive, send)
                return
            state, modified = found
            label = self.badges.label_for(query.get("url", ""))
            if path == "/badge/mcp":
                body, etag = badge.svg_of(state, query.get("style", "flat"), label)
                media_type = badge.SVG_TYPE
            else:
                body, etag = badge.json_of(state, label)
                media_type = "application/json"
            fresh = badge.not_modified(badge.if_none_match(tags), etag)
            status, headers, content = badge.answer(body, etag, media_type, state, modified, fresh)
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": content})
        finally:
            if status:
                self.access.write(scope, status, started)
