"""``GET /probe``: the page for operators who find our probes in their logs.

Our User-Agent names it (:func:`app.probe.runner.user_agent`: ``mcp-sonde/<version>
(+<public_url>/probe)``). It says what a probe sends (the MCP lifecycle of the 2025-06-18
specification: ``initialize``, ``notifications/initialized``, ``tools/list``, one
``tools/call`` of a made-up tool name, then the session's ``DELETE``), how often the registry
sweep probes an endpoint, the per-host budget, and how to opt out. It is a template
(``probe.html``) like every page: each value, settings included, is escaped by autoescaping,
and it is served with the pages' Content Security Policy.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from app.http.pages import units
from app.http.pages.render import page
from app.http.routes.ops import services_of
from app.net.agent import user_agent
from app.settings import Settings


def context_of(settings: Settings) -> dict[str, Any]:
    """The page's data for ``settings``."""
    return {
        "agent": user_agent(settings),
        "base": settings.public_base_url,
        "registry_url": settings.registry_url,
        "info_url": settings.info_url,
        "tools_max_pages": settings.tools_max_pages,
        "reply_cap": units.size(settings.reply_cap_bytes),
        "probe_timeout": units.duration(settings.probe_timeout_s),
        "sweep_interval": units.duration(settings.sweep_interval_s),
        "sweep_min_interval": units.duration(settings.sweep_min_interval_s),
        "sweep_max_interval": units.duration(settings.sweep_max_interval_s),
        "host_concurrency": settings.host_concurrency,
        "host_start_interval": units.duration(settings.host_start_interval_s),
    }


async def probe_page(request: Request) -> Response:
    """``GET /probe`` (see the module docs)."""
    settings = services_of(request).settings
    return page(request, "probe.html", context_of(settings), headers={"Cache-Control": "public, max-age=3600"})
