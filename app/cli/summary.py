"""The readable summary ``mcp-sonde check`` prints (``--json`` prints the result itself)."""

from __future__ import annotations

from typing import TextIO

from app.probe import ProbeResult
from app.suite.model import CheckResult

#: How each check state is shown.
_MARKS = {"verified": "ok  ", "failed": "FAIL", "observed_risk": "RISK", "unverified": "--  "}


def write_summary(result: ProbeResult, out: TextIO) -> None:
    """Write the readable summary of ``result`` to ``out``."""
    lines = [f"{result.url}", f"  status     {result.status} ({result.reason})"]
    if result.failed_step:
        lines.append(f"  failed at  {result.failed_step}")
    if result.detail:
        lines.append(f"  detail     {result.detail}")
    if result.server:
        title = f" ({result.server.title})" if result.server.title and result.server.title != result.server.name else ""
        lines.append(f"  server     {result.server.name or '?'} {result.server.version or ''}{title}".rstrip())
    if result.protocol_version:
        lines.append(f"  protocol   {result.protocol_version} ({result.era}, {result.transport})")
    if result.latency_ms is not None:
        lines.append(f"  latency    {result.latency_ms} ms (handshake); total {result.timings.total_ms} ms")
    if result.tools is not None:
        notes = [
            n
            for n, on in (("more pages not read", result.tools.more_pages), ("truncated", result.tools.truncated))
            if on
        ]
        shown = ", ".join(result.tools.names[:10]) + (
            " ... (--json lists up to 100)" if result.tools.count > 10 else ""
        )
        lines.append(f"  tools      {result.tools.count}{' (' + ', '.join(notes) + ')' if notes else ''}: {shown}")
    lines += _auth_lines(result) + _tls_lines(result)
    if result.location:
        lines.append(f"  location   {result.location}")
    if result.retry_after is not None:
        lines.append(f"  retry in   {result.retry_after} s")
    if result.http_status is not None:
        lines.append(f"  http       {result.http_status}")
    if result.warnings:
        lines.append(f"  warnings   {', '.join(result.warnings)}")
    lines += _check_lines(result)
    out.write("\n".join(lines) + "\n")


def _check_lines(result: ProbeResult) -> list[str]:
    if not isinstance(result, CheckResult):
        return []
    lines = []
    if result.credentialed:
        lines.append(f"  credentialed with {', '.join(result.credential_headers)}")
    if result.toolset_fingerprint:
        lines.append(f"  tools fp   {result.toolset_fingerprint}")
    if result.schema_fingerprint:
        lines.append(f"  schema fp  {result.schema_fingerprint}")
    if result.category is not None:
        lines.append(f"  category   {result.category.topic} (from tool names: {', '.join(result.category.words)})")
    lines.append("  checks")
    for check in result.checks:
        reason = f" ({check.reason})" if check.reason else ""
        lines.append(f"    {_MARKS[check.state]} {check.id}{reason}")
        for finding in check.evidence.get("findings", [])[:10] if check.id == "tool_description_hygiene" else []:
            lines.append(f"           {finding['rule']} in {finding['tool']}: {finding['excerpt'][:80]}")
    return lines


def _auth_lines(result: ProbeResult) -> list[str]:
    if result.auth is None:
        return []
    lines = []
    challenge = result.auth.challenge
    if challenge is not None:
        parts = [challenge.scheme or "?"] + [
            f"{name}={value}"
            for name, value in (("realm", challenge.realm), ("scope", challenge.scope), ("error", challenge.error))
            if value
        ]
        lines.append(f"  challenge  {' '.join(parts)}")
    metadata = result.auth.metadata
    if metadata is None:
        tried = len(result.auth.lookups)
        lines.append(f"  metadata   not published ({tried} location{'s' if tried != 1 else ''} tried)")
    else:
        match = "matches" if metadata.resource_matches else "does NOT match the URL"
        lines.append(f"  metadata   {metadata.url}")
        lines.append(f"  resource   {metadata.resource or '?'} ({match})")
        if metadata.authorization_servers:
            lines.append(f"  auth srv   {', '.join(metadata.authorization_servers)}")
        if metadata.scopes_supported:
            lines.append(f"  scopes     {' '.join(metadata.scopes_supported)}")
    return lines


def _tls_lines(result: ProbeResult) -> list[str]:
    tls = result.tls
    if tls is None:
        return []
    state = "verified" if tls.verified else "NOT verified"
    expiry = ""
    if tls.not_after is not None:
        expiry = f", expires {tls.not_after:%Y-%m-%d} ({tls.days_left} days)"
        if tls.days_left is not None and tls.days_left < 0:
            expiry = f", EXPIRED {tls.not_after:%Y-%m-%d} ({-tls.days_left} days ago)"
    lines = [f"  tls        {state}{expiry}"]
    if tls.issuer:
        lines.append(f"  issuer     {tls.issuer}")
    if tls.names:
        lines.append(f"  names      {', '.join(tls.names[:5])}{' ...' if len(tls.names) > 5 else ''}")
    return lines
