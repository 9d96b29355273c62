"""mcp-sonde: live checks of remote MCP servers.

The public surface is :func:`app.probe.probe` (one live check of an MCP endpoint), the
settings object :class:`app.settings.Settings`, and the ``mcp-sonde`` command line.

:data:`__version__` is the one version source: setuptools reads it into the package metadata
(``dynamic = ["version"]`` in ``pyproject.toml``, statically, without importing the package),
and ``mcp-sonde --version``, the MCP tool's server info and the served OpenAPI document's
``info.version`` take it from here, in a source checkout as in an installed wheel.
"""

from __future__ import annotations

__version__ = "0.2.0"
