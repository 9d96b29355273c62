"""A loopback MCP server whose words are hostile markup: its name, its tools' names, titles and
descriptions try to run script, load images or navigate when a page prints them as HTML."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.servers.raw_mcp import MiniMcp

SCRIPT = "<script>alert(1)</script>"
IMAGE = '<img src=x onerror="alert(2)">'
LINK = '<a href="javascript:alert(3)">click</a>'
NAME = f"{SCRIPT} mini"
TOOL = f"{SCRIPT}tool"
DESCRIPTION = f"Reads {IMAGE} and {LINK}"
TITLE = "javascript:alert(4)"


@dataclass
class HostileMcp(MiniMcp):
    """:class:`MiniMcp` with a hostile ``serverInfo`` and tool list (``tools`` are plain names kept beside)."""

    tools: list[str] = field(default_factory=lambda: ["search"])

    def _result(self, method: object) -> dict[str, Any]:
        result = super()._result(method)
        if method == "initialize":
            result["serverInfo"] = {"name": NAME, "version": "1.0", "title": f"{IMAGE} title"}
        if method == "tools/list":
            hostile = {"name": TOOL, "title": TITLE, "description": DESCRIPTION, "inputSchema": {"type": "object"}}
            result["tools"] = [*result["tools"], hostile]
        return result
