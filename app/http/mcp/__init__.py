"""The MCP endpoint at ``/mcp``: the check as a tool and the lookup tools, on the ``mcp`` SDK's server."""
