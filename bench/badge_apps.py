"""The two apps bench/badge.py compares, each run by ``mcp-sonde``'s uvicorn settings in its own process.

``bare`` answers every request with one fixed SVG from a plain Starlette route; ``sonde`` is the
service, whose badge for the target is already cached (the benchmark warms it first).
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


def bare() -> Starlette:
    """A bare route returning a fixed SVG."""
    return Starlette(routes=[Route("/badge/mcp", fixed)])


def sonde() -> Starlette:
    """The service with development settings (the target is on loopback)."""
    return create_app(Settings(allow_private=True, badge_rate_limit="1000000/minute", redis_url=None))
