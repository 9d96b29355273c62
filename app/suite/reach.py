"""Judges of the ``reach`` group: reachability, transport, latency.

Reachability is settled when the first request gets an HTTP answer (any status): budget
trouble later in the probe cannot undo it. Without an answer the probe's reason says why
(DNS, connection, TLS, time), folded into the catalogue's failure keys.
"""

from __future__ import annotations

from app.suite.catalogue import CheckSpec
from app.suite.facts import Facts, blocked, verdict
from app.suite.model import CheckVerdict

_UNREACHED = {
    "dns_nxdomain": "dns_nxdomain",
    "dns_no_records": "dns_no_records",
    "connection_refused": "connection_refused",
    "connection_reset": "connection_reset",
    "connection_closed": "connection_closed",
    "network_unreachable": "network_unreachable",
    "connect_failed": "connect_failed",
    "connect_timeout": "connect_timeout",
    "read_timeout": "no_answer",
    "probe_deadline": "no_answer",
    "invalid_http": "not_http",
}


def reachability(facts: Facts, spec: CheckSpec) -> CheckVerdict:
    """Verified on any HTTP answer to the first request; otherwise the reason it did not come."""
    result = facts.result
    if facts.evidence.answered:
        return verdict(spec, "verified", http_status=result.http_status)
    if result.reason in ("dns_timeout", "dns_failure"):
        return verdict(spec, "unverified", "resolver_inconclusive", probe_reason=result.reason)
    if result.status == "tls":
        return verdict(spec, "failed", "tls_failed", probe_reason=result.reason)
    return verdict(spec, "failed", _UNREACHED.get(result.reason, "connect_failed"), probe_reason=result.reason)


def transport(facts: Facts, spec: CheckSpec) -> CheckVerdict:
    """Streamable HTTP is verified; HTTP+SSE alone is a risk (deprecated); an answer without either fails."""
    result = facts.result
    if result.transport == "streamable_http" and facts.handshake_done:
        return verdict(spec, "verified", transport=result.transport, era=result.era)
    if result.transport == "sse":
        return verdict(spec, "observed_risk", "legacy_http_sse", transport="sse", era=result.era)
    if facts.gated or not facts.evidence.answered:
        return blocked(facts, spec)
    if result.reason in ("probe_deadline", "read_timeout"):
        return verdict(spec, "unverified", "not_reached", probe_reason=result.reason)
    return verdict(spec, "failed", "no_mcp_transport", probe_reason=result.reason, http_status=result.http_status)


def latency(facts: Facts, spec: CheckSpec) -> CheckVerdict:
    """The handshake exchange's time against ``params.slow_ms``."""
    result = facts.result
    if result.latency_ms is None or not facts.handshake_done:
        return blocked(facts, spec)
    slow_ms = float(spec.params["slow_ms"])
    evidence = {
        "handshake_ms": result.latency_ms,
        "tools_list_ms": result.timings.tools_list_ms,
        "total_ms": result.timings.total_ms,
        "slow_ms": slow_ms,
    }
    if result.latency_ms > slow_ms:
        return verdict(spec, "observed_risk", "slow_handshake", **evidence)
    return verdict(spec, "verified", **evidence)
