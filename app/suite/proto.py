"""Judges of the ``proto`` group: protocol revision, handshake, ``tools/list``, the refusal call.

Policy: a check whose step did not run is ``unverified`` (:func:`app.suite.facts.blocked`).
Deviations a tolerant client reads past (missing ``initialize`` fields, a tool list of the
wrong shape) leave the probe's status alone but fail the check that covers them, with each
deviation named in the evidence.
"""

from __future__ import annotations

from app.probe.jsonrpc import HANDSHAKE_VERSION, MODERN_VERSION
from app.suite.catalogue import CheckSpec
from app.suite.facts import Facts, blocked, verdict
from app.suite.model import CheckVerdict

#: JSON-RPC codes that say the server broke, not that it refused: internal error, parse error.
_BROKEN_CODES = frozenset({-32603, -32700})
_HANDSHAKE_STEPS = frozenset({"server/discover", "initialize", "sse/connect", "dns", "probe"})
_HANDSHAKE_WARNINGS = (
    "protocol_version_missing",
    "server_info_missing",
    "server_info_invalid",
    "capabilities_missing",
    "capabilities_invalid",
)


def protocol_revision(facts: Facts, spec: CheckSpec) -> CheckVerdict:
    """A published revision answered, by ``server/discover`` or ``initialize``."""
    result = facts.result
    if result.reason == "protocol_version_rejected":
        return verdict(spec, "failed", "revision_rejected", offered=[MODERN_VERSION, HANDSHAKE_VERSION])
    if not facts.handshake_done:
        return blocked(facts, spec)
    path = facts.evidence.handshake
    offered = MODERN_VERSION if path == "server/discover" else HANDSHAKE_VERSION
    answered = result.protocol_version
    evidence = {"path": path, "offered": offered, "answered": answered}
    if answered is None:
        return verdict(spec, "failed", "revision_missing", **evidence)
    if answered not in spec.params["published"]:
        return verdict(spec, "failed", "revision_unknown", **evidence)
    return verdict(spec, "verified", older_than_offered=answered < offered, **evidence)


def handshake(facts: Facts, spec: CheckSpec) -> CheckVerdict:
    """The handshake completed with a conforming result."""
    result = facts.result
    if facts.handshake_done:
        problems = [w for w in _HANDSHAKE_WARNINGS if w in result.warnings]
        if problems:
            return verdict(spec, "failed", "result_nonconformant", path=facts.evidence.handshake, problems=problems)
        return verdict(spec, "verified", path=facts.evidence.handshake, latency_ms=result.latency_ms)
    if facts.gated or not facts.evidence.answered:
        return blocked(facts, spec)
    return verdict(spec, "failed", result.reason, failed_step=result.failed_step, http_status=result.http_status)


def tools_list(facts: Facts, spec: CheckSpec) -> CheckVerdict:
    """Every page read, every entry a tool with a distinct name."""
    result, evidence = facts.result, facts.evidence
    tools = result.tools
    if tools is None or not facts.handshake_done:
        return blocked(facts, spec)
    shape = {"count": tools.count, "pages_read": tools.pages_read}
    if result.failed_step == "tools/list":
        if result.reason == "probe_deadline":
            return verdict(spec, "unverified", "budget_exhausted", **shape)
        if result.status == "auth":  # a sign-in wall met only at the list
            return verdict(spec, "unverified", "credential_required", **shape)
        return verdict(spec, "failed", result.reason, http_status=result.http_status, **shape)
    if tools.error_code is not None or "error_answer" in evidence.list_problems:
        return verdict(spec, "failed", "error_answer", code=tools.error_code, **shape)
    if evidence.list_problems:
        counts = {"invalid_entries": tools.invalid_entries, "duplicate_entries": tools.duplicate_entries}
        return verdict(spec, "failed", "shape_nonconformant", problems=list(evidence.list_problems), **counts, **shape)
    if not evidence.list_complete:
        return verdict(spec, "unverified", "list_incomplete", more_pages=tools.more_pages, truncated=tools.truncated)
    return verdict(spec, "verified", **shape)


def error_taxonomy(facts: Facts, spec: CheckSpec) -> CheckVerdict:
    """How the server refused ``tools/call`` of a made-up name (:mod:`app.probe.refusal`)."""
    refusal = facts.evidence.refusal
    if refusal is None:
        return blocked(facts, spec)
    if refusal.withheld is not None:
        reason = {
            "credential_gate": "credential_required",
            "list_incomplete": "list_incomplete",
            "name_listed": "withheld",
        }.get(refusal.withheld, "not_reached")
        if reason == "not_reached":
            return blocked(facts, spec, withheld=refusal.withheld)
        return verdict(spec, "unverified", reason, withheld=refusal.withheld)
    answer = {"kind": refusal.kind, "http_status": refusal.http_status, "elapsed_ms": refusal.elapsed_ms}
    if refusal.kind == "jsonrpc_error" and refusal.code in _BROKEN_CODES:
        return verdict(spec, "failed", "internal_error", code=refusal.code, **answer)
    if refusal.kind == "jsonrpc_error":
        return verdict(spec, "verified", code=refusal.code, spec_code=refusal.code == -32602, **answer)
    if refusal.kind == "tool_error":
        return verdict(spec, "verified", **answer)
    if refusal.kind == "success":
        return verdict(spec, "observed_risk", "accepted_unknown_tool", **answer)
    if refusal.kind == "credential_gate":
        return verdict(spec, "unverified", "credential_required", **answer)
    if refusal.kind == "timeout" and refusal.budget_limited:
        return verdict(spec, "unverified", "budget_exhausted", **answer)
    return verdict(spec, "failed", refusal.kind, detail=refusal.detail, **answer)
