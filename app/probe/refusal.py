"""The refusal call: how a server says no to a tool that does not exist.

Policy (MCP 2025-11-25 ``server/tools``, "Error Handling": an unknown tool is a protocol error,
for example JSON-RPC ``-32602``; a failure while running a tool is a result with
``isError: true``): after a complete ``tools/list``, the probe calls ``tools/call`` once with
the reserved name :data:`~app.probe.evidence.REFUSAL_TOOL` and empty arguments, and records
how the server refused. It never calls any other tool, and it withholds the call when

- the list names that tool (``name_listed``): a server may really have it;
- the list was not read to its end (``list_incomplete``): the name might be on a page unread;
- a credential gate was met (``credential_gate``) or the handshake did not complete
  (``not_reached``);
- the probe is a light one (``light_probe``, badges).

The answer never changes the probe's status or reason: it is evidence for the
``error_taxonomy`` check only.
"""

from __future__ import annotations

import time

import httpx2

from app.probe.classify import classify_exception, classify_reply
from app.probe.evidence import REFUSAL_TOOL, Refusal, RefusalWithheld
from app.probe.exchange import Reply
from app.probe.findings import Findings
from app.probe.jsonrpc import error_of, tools_call_request
from app.probe.reasons import status_of
from app.probe.text import clean_text
from app.probe.tools import Conversing


def withheld(findings: Findings) -> RefusalWithheld | None:
    """Why the refusal call must not be made now, or ``None`` when it may."""
    if findings.light:
        return "light_probe"
    if findings.verdict is not None and status_of(findings.verdict.reason) == "auth":
        return "credential_gate"
    tools = findings.tools
    if findings.verdict is not None or tools is None:
        return "not_reached"
    if not findings.evidence.list_complete:
        return "list_incomplete"
    if REFUSAL_TOOL in findings.evidence.names:
        return "name_listed"
    return None


def refusal_of(reply: Reply) -> Refusal:
    """Classify the answer to the refusal call (see :data:`~app.probe.evidence.RefusalKind`)."""
    refusal = Refusal(http_status=reply.status, elapsed_ms=reply.elapsed_ms)
    error = error_of(reply.response) or reply.error_body
    if reply.status == 401:
        refusal.kind = "credential_gate"
        return refusal
    if error is not None:
        refusal.kind = "jsonrpc_error"
        code = error.get("code")
        refusal.code = code if isinstance(code, int) and not isinstance(code, bool) else None
        refusal.detail = clean_text(error.get("message"), 200)
        return refusal
    if reply.status // 100 != 2:
        refusal.kind = "http_error"
        return refusal
    verdict = classify_reply(reply)
    result = reply.response.get("result") if reply.response is not None else None
    if verdict is not None or not isinstance(result, dict):
        refusal.kind = "malformed"
        refusal.detail = verdict.reason if verdict is not None else "result_not_object"
        return refusal
    if result.get("isError") is True:
        refusal.kind = "tool_error"
        refusal.detail = _first_text(result.get("content"))
        return refusal
    refusal.kind = "success"
    return refusal


def _first_text(content: object) -> str | None:
    if isinstance(content, list):
        for item in content[:8]:
            if isinstance(item, dict) and item.get("type") == "text":
                return clean_text(item.get("text"), 200)
    return None


async def refuse(conversation: Conversing, *, modern: bool) -> None:
    """Make the refusal call unless it is withheld; never records a failure (see the module docs)."""
    reason = withheld(conversation.findings)
    if reason is not None:
        conversation.findings.evidence.refusal = Refusal(withheld=reason)
        return
    conversation.findings.step("tools/call")
    remaining = conversation.deadline - time.monotonic()
    timeout = min(conversation.refusal_timeout_s, remaining)
    if timeout <= 0:
        conversation.findings.evidence.refusal = Refusal(kind="timeout", budget_limited=True)
        return
    request = tools_call_request(
        conversation.next_id(), REFUSAL_TOOL, {}, modern_client_info=conversation.client_info if modern else None
    )
    headers = conversation.headers_for("tools/call", REFUSAL_TOOL) if modern else conversation.headers_for()
    started = time.monotonic()
    try:
        reply = await conversation.exchange(request, headers, timeout, expect=True)
        refusal = refusal_of(reply)
    except TimeoutError:
        refusal = Refusal(kind="timeout", budget_limited=timeout < conversation.refusal_timeout_s)
    except httpx2.HTTPError as exc:
        refusal = Refusal(kind="transport_error", detail=classify_exception(exc).reason)
    elapsed = round((time.monotonic() - started) * 1000, 1)
    refusal.elapsed_ms = elapsed
    conversation.findings.timings.tools_call_ms = elapsed
    conversation.findings.evidence.refusal = refusal
