"""Recording a handshake's result: ``server/discover`` (2026-07-28) or ``initialize`` (earlier).

What a tolerant client accepts (MCP 2025-11-25 ``basic/lifecycle``, ``InitializeResult``; MCP
2026-07-28 ``server/discover``, ``DiscoverResult``): the result must be a JSON object, and any
of its fields may be missing or of the wrong type. A missing or non-string ``protocolVersion``
is recorded as unknown (warning ``protocol_version_missing``) and no ``MCP-Protocol-Version``
header is sent after it (the server then assumes 2025-03-26, as the transport spec says); a
``serverInfo`` or ``capabilities`` that is not an object is dropped (``server_info_invalid``,
``capabilities_invalid``); a missing one, or a ``serverInfo`` without a string ``name`` and
``version``, is noted (``server_info_missing``, ``capabilities_missing``,
``server_info_invalid``). The check suite judges these deviations (the ``handshake`` check);
the status stays that of a server that answered.

Sessions (MCP 2025-11-25 ``basic/transports``, "Session Management"): an ``Mcp-Session-Id`` of
visible ASCII (0x21 to 0x7E) is kept and sent on later requests; another one is reported
(``session_id_invalid``) and not sent back.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from app.net.fields import single_value
from app.probe.exchange import Reply
from app.probe.findings import Findings
from app.probe.jsonrpc import META_SERVER_INFO, MODERN_VERSION, JsonObject
from app.probe.text import clean_json, clean_text

if TYPE_CHECKING:
    from app.probe.result import ServerInfo

_SESSION_ID = re.compile(r"[\x21-\x7e]{1,1024}")
_VERSION_TOKEN = re.compile(r"[\x21-\x7e]{1,64}")


def record_modern(findings: Findings, result: JsonObject, reply: Reply) -> None:
    """Record a ``DiscoverResult`` that lists 2026-07-28."""
    findings.era, findings.transport = "modern", "streamable_http"
    findings.evidence.handshake = "server/discover"
    findings.protocol_version = MODERN_VERSION
    meta = result.get("_meta")
    info = meta.get(META_SERVER_INFO) if isinstance(meta, dict) else None
    _record_common(findings, result, reply, info if info is not None else result.get("serverInfo"))


def record_legacy(findings: Findings, result: JsonObject, reply: Reply, *, sse: bool) -> str | None:
    """Record an ``InitializeResult``; returns the version to send in ``MCP-Protocol-Version``, if usable."""
    findings.era, findings.transport = "legacy", "sse" if sse else "streamable_http"
    findings.evidence.handshake = "initialize"
    version = result.get("protocolVersion")
    findings.protocol_version = clean_text(version, 64) or None
    if findings.protocol_version is None:
        findings.warn("protocol_version_missing")
    if "serverInfo" not in result:  # required by InitializeResult
        findings.warn("server_info_missing")
    _record_common(findings, result, reply, result.get("serverInfo"))
    return version if isinstance(version, str) and _VERSION_TOKEN.fullmatch(version) else None


def session_of(findings: Findings, reply: Reply) -> str | None:
    """The ``Mcp-Session-Id`` issued with the ``initialize`` answer, when usable (recorded either way)."""
    session_id = single_value(reply.headers, "mcp-session-id")  # (a conflict was failed before)
    from app.probe.result import SessionInfo

    findings.session = SessionInfo(issued=session_id is not None)
    if session_id is None:
        return None
    if _SESSION_ID.fullmatch(session_id):
        return session_id
    findings.warn("session_id_invalid")
    return None


def _record_common(findings: Findings, result: JsonObject, reply: Reply, info: Any) -> None:
    if "capabilities" not in result:  # required by InitializeResult and DiscoverResult
        findings.warn("capabilities_missing")
    findings.http_status = reply.status
    findings.latency_ms = reply.elapsed_ms
    findings.server = _server_info(info, findings)
    findings.capabilities = _capabilities(result.get("capabilities"), findings)
    findings.instructions = clean_text(result.get("instructions"), 1000)
    if reply.sse_unterminated:
        findings.warn("sse_event_unterminated")


def _server_info(info: Any, findings: Findings) -> ServerInfo | None:
    if not isinstance(info, dict):
        if info is not None:
            findings.warn("server_info_invalid")
        return None
    if not (isinstance(info.get("name"), str) and isinstance(info.get("version"), str)):
        findings.warn("server_info_invalid")  # Implementation requires a string name and version
    from app.probe.result import ServerInfo

    return ServerInfo(
        name=clean_text(info.get("name"), 128),
        version=clean_text(info.get("version"), 64),
        title=clean_text(info.get("title"), 128),
    )


def _capabilities(value: Any, findings: Findings) -> dict[str, Any] | None:
    cleaned = clean_json(value)
    if not isinstance(cleaned, dict):
        if value is not None:
            findings.warn("capabilities_invalid")
        return None
    return cleaned
