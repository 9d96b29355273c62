"""Reading ``tools/list`` pages (MCP 2025-11-25 ``server/tools``, ``server/utilities/pagination``).

Policy: follow ``nextCursor`` up to the page limit; a page larger than the reply cap is read
as far as it goes (``truncated``) and the listing ends there; a cursor the server already sent ends the
listing (``cursor_repeated``) instead of looping; entries that are not tool objects with a
string ``name`` (null, missing name, ...) are counted as invalid, not fatal; an empty-string
cursor means the end.
"""

from __future__ import annotations

import json
import re
from typing import Any

from app.probe.findings import Findings
from app.probe.result import ToolsInfo
from app.probe.text import clean_text

MAX_TOOL_NAMES = 100
_TOOLS_ARRAY = re.compile(r'^\s*\{.{0,200}?"result"\s*:\s*\{\s*"tools"\s*:\s*\[', re.DOTALL)


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


def salvage_page(partial: bytes, tools: ToolsInfo, findings: Findings) -> None:
    """Count the complete tool objects at the start of a truncated ``tools/list`` JSON reply.

    Only the common layout ``{... "result": {"tools": [ ...`` is read; the objects are decoded
    one by one until the cut. Marks ``tools.truncated``.
    """
    tools.truncated = True
    findings.warn("reply_truncated")
    text = partial.decode("utf-8", "replace")
    match = _TOOLS_ARRAY.match(text)
    if match is None:
        return
    decoder = json.JSONDecoder()
    position = match.end()
    entries: list[Any] = []
    while True:
        while position < len(text) and text[position] in " \t\r\n,":
            position += 1
        try:
            entry, position = decoder.raw_decode(text, position)
        except (ValueError, RecursionError):
            break
        entries.append(entry)
    read_page({"tools": entries}, tools, findings)
