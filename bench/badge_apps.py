"""The apps bench/badge.py compares, each run by ``mcp-sonde``'s uvicorn settings in its own process.

``bare`` answers every request with one fixed SVG from a plain Starlette route, ``headed`` the
same with the headers a cached badge carries;
``sonde`` is the service, whose badge for the target is already cached (the benchmark warms it first).
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.http import create_app
from app.settings import Settings
from badges import render_svg

SVG = render_svg("MCP", "live · checked 2026-11-30", "brightgreen").encode()


async def fixed(request: Request) -> Response:
    return Response(SVG, media_type="image/svg+xml; charset=utf-8")


#: The headers a cached badge is answered with (app.http.badges.drawing.answer, and the request id).
BADGE_HEADERS = {
    "cache-control": "max-age=300, s-maxage=300",
    "etag": '"f072f768f6832ac63a9e2611e126d986"',
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:",
    "x-badge-state": "ok",
    "last-modified": "Mon, 30 Nov 2026 10:13:02 GMT",
    "x-request-id": "65c3dcb26a7e53d62e39f6669609b53f",
}


async def fixed_with_headers(request: Request) -> Response:
    return Response(SVG, media_type="image/svg+xml; charset=utf-8", headers=BADGE_HEADERS)


def headed() -> Starlette:
    """A bare route returning a fixed SVG with the headers of a cached badge (a reference figure)."""
    return Starlette(routes=[Route("/badge/mcp", fixed_with_headers)])


def bare() -> Starlette:
    """A bare route returning a fixed SVG."""
    return Starlette(routes=[Route("/badge/mcp", fixed)])


def sonde() -> Starlette:
    """The service with development settings (the target is on loopback)."""
    return create_app(Settings(allow_private=True, badge_rate_limit="1000000/minute", redis_url=None))
