"""Reading ``tools/list`` pages (MCP 2025-11-25 ``server/tools``, ``server/utilities/pagination``).

Policy: follow ``nextCursor`` up to the page limit; a cursor the server already sent ends the
listing (``cursor_repeated``) instead of looping; entries that are not tool objects with a
string ``name`` (null, missing name, ...) are counted as invalid, not fatal; an empty-string
cursor means the end.
"""

from __future__ import annotations

from typing import Any

from app.probe.findings import Findings
from app.probe.result import ToolsInfo
from app.probe.text import clean_text

MAX_TOOL_NAMES = 100


def read_page(result: Any, tools: ToolsInfo, findings: Findings) -> str | None:
    """Count one page's tools into ``tools``; return its ``nextCursor`` (``None`` at the end)."""
    if not isinstance(result, dict):
        findings.warn("tools_result_invalid")
        return None
    entries = result.get("tools")
    if not isinstance(entries, list):
        findings.warn("tools_missing")
        return None
    for entry in entries:
        name = clean_text(entry.get("name"), 128) if isinstance(entry, dict) else None
        if not name:
            tools.invalid_entries += 1
            continue
        tools.count += 1
        if len(tools.names) < MAX_TOOL_NAMES:
            tools.names.append(name)
    if tools.invalid_entries:
        findings.warn("invalid_tool_entries")
    cursor = result.get("nextCursor")
    return cursor if isinstance(cursor, str) and cursor else None
