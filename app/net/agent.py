"""Who we say we are on the wire: the ``User-Agent`` of every request mcp-sonde sends.

RFC 9110 section 10.1.5: a product token and a comment. Ours names the page that explains our
probes and how to opt out, so an operator who finds us in a log can find out who is calling.
"""

from __future__ import annotations

from app import __version__
from app.settings import Settings

#: The product name (also the MCP ``clientInfo`` name of the probe).
CLIENT_NAME = "mcp-sonde"


def user_agent(settings: Settings) -> str:
    """``mcp-sonde/<version> (+<public url>/probe)`` on a service with a ``public_url`` (the page
    that explains our probes and how to opt out), else ``mcp-sonde/<version> (+<info url>)``."""
    page = f"{settings.public_base_url}/probe" if settings.public_url else settings.info_url
    return f"{CLIENT_NAME}/{__version__} (+{page})"
