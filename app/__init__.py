"""mcp-sonde: live checks of remote MCP servers.

The public surface is :func:`app.probe.probe` (one live check of an MCP endpoint), the
settings object :class:`app.settings.Settings`, and the ``mcp-sonde`` command line.
"""

from __future__ import annotations

__version__ = "0.1.0"
