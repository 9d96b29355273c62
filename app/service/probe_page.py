"""``GET /probe``: a plain HTML page (no script) for operators who find our probes in their logs.

Our User-Agent names it (:func:`app.probe.runner.user_agent`: ``mcp-sonde/<version>
(+<public_url>/probe)``). It says what a probe sends (the MCP lifecycle of the 2025-06-18
specification: ``initialize``, ``notifications/initialized``, ``tools/list``, one
``tools/call`` of a made-up tool name, then the session's ``DELETE``), how often the registry
sweep probes an endpoint, the per-host budget, and how to opt out. Every value put in the page
is HTML-escaped (:func:`html.escape`), settings included; it is served with a Content Security
Policy that allows no script at all.
"""

from __future__ import annotations

from html import escape

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from app.probe.runner import user_agent
from app.service.services import Services
from app.settings import Settings

CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"


def _hours(seconds: float) -> str:
    hours = seconds / 3600
    return f"{hours:g} hours" if hours < 48 else f"{hours / 24:g} days"


def render(settings: Settings) -> str:
    """The page's HTML for ``settings``."""
    e = escape
    agent = user_agent(settings)
    base = settings.public_base_url
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>mcp-sonde probes</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: sans-serif; max-width: 46em; margin: 2em auto; line-height: 1.5">
<h1>What is this mcp-sonde probe?</h1>
<p>Requests with the user agent <code>{e(agent)}</code> come from <a href="{e(base)}">{e(base)}</a>,
a service that checks remote MCP (Model Context Protocol) servers: whether they answer, which tools they
list, and whether the list changed. Besides checks people ask for, it probes every remote endpoint listed
in the official MCP registry (<code>{e(settings.registry_url)}</code>) on a schedule.</p>
<h2>What a probe sends</h2>
<p>One MCP session, as a client would open it: <code>initialize</code>, <code>notifications/initialized</code>,
<code>tools/list</code> (at most {settings.tools_max_pages} pages), one <code>tools/call</code> of a made-up
tool name (to see that unknown tools are refused), then the session's closing <code>DELETE</code>. It never
calls a real tool, never sends credentials, cookies or query strings of its own, and reads at most
{settings.reply_cap_bytes} bytes of each reply. A probe takes at most {settings.probe_timeout_s:g} seconds.</p>
<h2>How often</h2>
<p>Each registry endpoint is probed about once every {e(_hours(settings.sweep_interval_s))} (spread over the day,
with jitter), never more than once in {e(_hours(settings.sweep_min_interval_s))}. An endpoint that keeps
failing is probed less and less often (the wait doubles), down to once every
{e(_hours(settings.sweep_max_interval_s))}.</p>
<h2>The budget per host</h2>
<p>At most {settings.host_concurrency} probes of one host run at once, and at most one new probe starts per
{settings.host_start_interval_s:g} second(s) per host, across all our workers. Registry endpoints that need
headers (API keys) or whose URL is a template are never probed.</p>
<h2>Opting out</h2>
<p>Ask us to add your host (which covers all its subdomains) or one endpoint URL to our opt-out list:
see <a href="{e(settings.info_url)}">{e(settings.info_url)}</a>. Once listed, nothing is sent to it again:
the list is checked before any probe is queued and again right before it runs.</p>
</body></html>
"""


async def probe_page(request: Request) -> Response:
    """``GET /probe``: the page (see the module docs)."""
    services: Services = request.app.state.services
    headers = {"Content-Security-Policy": CSP, "Cache-Control": "public, max-age=3600"}
    return HTMLResponse(render(services.settings), headers=headers)
