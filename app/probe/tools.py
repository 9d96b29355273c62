"""Reading ``tools/list`` pages (MCP 2025-11-25 ``server/tools``, ``server/utilities/pagination``).

Policy: follow ``nextCursor`` up to the page limit; a page larger than the reply cap is read
as far as it goes (``truncated``) and the listing ends there; a cursor the server already sent
ends the listing (``cursor_repeated``) instead of looping; an empty-string cursor means the end.

A tolerant client reads every real tool it can, and so does the probe; each deviation from
the ``ListToolsResult`` shape is a stable key in ``Evidence.list_problems`` (and a warning),
never a failure of a working server:

- ``result_bare_array``: the result is the array of tools itself, not ``{"tools": [...]}``;
- ``tools_as_object``: ``tools`` is an object of tool objects (keyed by name) instead of a list;
- ``result_not_object`` / ``tools_missing``: nothing to read on the page (the list is then not
  complete: no fingerprint, no refusal call);
- ``cursor_invalid``: a ``nextCursor`` that is not a string (the list may go on; not complete);
- ``entry_not_object`` / ``entry_without_name``: entries that are not tool objects with a
  string ``name`` (null, strings, a missing or empty name) are counted as invalid;
- ``duplicate_tool``: a name already listed (on this page or an earlier one) is counted once,
  and the first definition is the one kept.

Only objects with a non-empty string ``name`` are tools (``Tool.name`` is required).
"""

from __future__ import annotations

import json
import re
import time
from typing import TYPE_CHECKING, Any, Protocol

from app import jsonsafe
from app.probe.classify import Verdict, classify_reply
from app.probe.exchange import REPLY_DEPTH, Reply
from app.probe.findings import Findings
from app.probe.jsonrpc import JsonObject, error_of, tools_list_request
from app.probe.text import clean_text

if TYPE_CHECKING:
    from app.probe.result import ToolsInfo


class Conversing(Protocol):
    """What the tool steps need of a conversation (:class:`app.probe.streamable.Conversation`)."""

    findings: Findings
    client_info: JsonObject
    max_pages: int
    deadline: float
    refusal_timeout_s: float

    def next_id(self) -> int: ...
    def headers_for(self, method: str | None = None, name: str | None = None) -> dict[str, str]: ...
    def fail(self, step: str, verdict: Verdict, reply: Reply) -> None: ...
    async def send(self, step: str, body: JsonObject, headers: dict[str, str], *, expect: bool = True) -> Reply:
        """Send one message; a transport failure is recorded and stops the conversation."""
        ...

    async def exchange(self, body: JsonObject, headers: dict[str, str], budget_s: float, *, expect: bool) -> Reply:
        """Send one message; transport failures and timeouts are raised."""
        ...


MAX_TOOL_NAMES = 100
#: Page problems after which the list cannot be said to be read to its end.
UNREADABLE = frozenset({"result_not_object", "tools_missing", "cursor_invalid"})
#: Most tool objects kept as evidence per probe (a page is capped in bytes already).
MAX_TOOL_ENTRIES = 2000
_TOOLS_ARRAY = re.compile(r'^\s*\{.{0,200}?"result"\s*:\s*\{\s*"tools"\s*:\s*\[', re.DOTALL)


def _entries(result: Any, findings: Findings) -> list[Any] | None:
    """The tool entries of one page, read as tolerantly as the module docs say."""
    evidence = findings.evidence
    if isinstance(result, list):
        evidence.problem("result_bare_array")
        return result
    if not isinstance(result, dict):
        evidence.problem("result_not_object")
        return None
    entries = result.get("tools")
    if isinstance(entries, list):
        return entries
    if isinstance(entries, dict) and entries and all(isinstance(v, dict) for v in entries.values()):
        evidence.problem("tools_as_object")
        return [v if isinstance(v.get("name"), str) else {**v, "name": k} for k, v in entries.items()]
    evidence.problem("tools_missing")
    return None


def read_page(result: Any, tools: ToolsInfo, findings: Findings) -> str | None:
    """Count one page's tools into ``tools``; return its ``nextCursor`` (``None`` at the end)."""
    entries = _entries(result, findings)
    if entries is None:
        for key in findings.evidence.list_problems:
            findings.warn(_WARNINGS.get(key, key))
        return None
    evidence = findings.evidence
    seen = evidence.names
    for entry in entries:
        if not isinstance(entry, dict):
            tools.invalid_entries += 1
            evidence.problem("entry_not_object")
            continue
        raw_name = entry.get("name")
        name = clean_text(raw_name, 128) if isinstance(raw_name, str) else None
        if not name or not isinstance(raw_name, str):
            tools.invalid_entries += 1
            evidence.problem("entry_without_name")
            continue
        if raw_name in seen:
            tools.duplicate_entries += 1
            evidence.problem("duplicate_tool")
            continue
        seen.add(raw_name)
        tools.count += 1
        if len(tools.names) < MAX_TOOL_NAMES:
            tools.names.append(name)
        if len(evidence.tool_entries) < MAX_TOOL_ENTRIES:
            evidence.tool_entries.append(entry)
        else:
            evidence.entries_capped = True
    for key in evidence.list_problems:
        findings.warn(_WARNINGS.get(key, key))
    cursor = result.get("nextCursor") if isinstance(result, dict) else None
    if cursor is not None and not isinstance(cursor, str):
        evidence.problem("cursor_invalid")  # the list may go on, but no client can ask for it
        findings.warn("cursor_invalid")
    return cursor if isinstance(cursor, str) and cursor else None


#: Warning keys of list problems (the older keys stay for API stability).
_WARNINGS = {
    "result_not_object": "tools_result_invalid",
    "entry_not_object": "invalid_tool_entries",
    "entry_without_name": "invalid_tool_entries",
    "duplicate_tool": "duplicate_tools",
}


def salvage_page(partial: bytes, tools: ToolsInfo, findings: Findings) -> None:
    """Count the complete tool objects at the start of a truncated ``tools/list`` JSON reply.

    Only the common layout ``{... "result": {"tools": [ ...`` is read; the objects are decoded
    one by one until the cut. Marks ``tools.truncated``.
    """
    tools.truncated = True
    findings.warn("reply_truncated")
    text = partial.decode("utf-8", "replace")
    match = _TOOLS_ARRAY.match(text)
    if match is None or jsonsafe.too_deep(partial, REPLY_DEPTH):
        return  # (the stdlib decoder recurses: never hand it deeper nesting than a whole reply may have)
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


async def list_tools(
    conversation: Conversing, *, modern: bool, first: Reply | None = None, started: float | None = None
) -> None:
    """Read ``tools/list`` page by page (see the module docs); failures are recorded, never raised.

    ``first``: the first page's reply when it was already asked for (beside a notification), at
    ``started`` (``time.monotonic()``)."""
    from app.probe.result import ToolsInfo

    step = "tools/list"
    tools = ToolsInfo()
    conversation.findings.tools = tools
    cursor: str | None = None
    seen: set[str] = set()
    started = started if started is not None else time.monotonic()
    try:
        while tools.pages_read < conversation.max_pages:
            if first is not None:
                reply, first = first, None
            else:
                request = tools_list_request(
                    conversation.next_id(), cursor, modern_client_info=conversation.client_info if modern else None
                )
                reply = await conversation.send(step, request, conversation.headers_for(step if modern else None))
            conversation.findings.evidence.listed_bytes += reply.body_bytes
            verdict = classify_reply(reply)
            if verdict is not None and verdict.reason == "reply_too_large":
                salvage_page(reply.partial, tools, conversation.findings)
                tools.pages_read += 1
                return
            if verdict is not None:
                conversation.fail(step, verdict, reply)
                return
            assert reply.response is not None
            error = error_of(reply.response)
            if error is not None:
                code = error.get("code")
                tools.error_code = code if isinstance(code, int) and not isinstance(code, bool) else None
                conversation.findings.warn("tools_list_error")
                conversation.findings.evidence.problem("error_answer")
                return
            cursor = read_page(reply.response.get("result"), tools, conversation.findings)
            tools.pages_read += 1
            if cursor is None:
                unread = UNREADABLE.intersection(conversation.findings.evidence.list_problems)
                conversation.findings.evidence.list_complete = not unread
                return
            if cursor in seen:
                tools.cursor_repeated = True
                conversation.findings.warn("cursor_repeated")
                conversation.findings.evidence.problem("cursor_repeated")
                return
            seen.add(cursor)
        tools.more_pages = True
    finally:
        conversation.findings.timings.tools_list_ms = round((time.monotonic() - started) * 1000, 1)
