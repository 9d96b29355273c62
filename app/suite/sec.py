"""Judges of the ``sec`` group: TLS certificate, redirects, the sign-in wall, tool hygiene.

Sources: RFC 9110 section 15.4 (redirects; 301, 302 and 303 let clients turn POST into GET),
section 11.6.1 (``WWW-Authenticate``); RFC 9728 sections 3.3 and 5.1 (protected resource
metadata, its ``resource``); RFC 6750 section 3 (``scope``); MCP 2025-11-25
``basic/authorization`` (servers MUST publish protected resource metadata).
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from app.probe.legacy_sse import same_origin
from app.suite.catalogue import CheckSpec
from app.suite.facts import Facts, blocked, verdict
from app.suite.model import CheckVerdict

if TYPE_CHECKING:
    from app.probe.auth import AuthInfo, MetadataLookup

#: Findings reported in a verdict's evidence (``total`` counts them all): the answer stays small.
MAX_FINDINGS = 100


def tls_certificate(facts: Facts, spec: CheckSpec) -> CheckVerdict:
    """The certificate verified, and is valid for longer than ``params.warn_days``."""
    result = facts.result
    if urlsplit(result.url).scheme != "https":
        return verdict(spec, "unverified", "not_applicable", scheme="http")
    tls = result.tls
    dates = {}
    if tls is not None:
        dates = {
            "not_after": tls.not_after.isoformat() if tls.not_after else None,
            "days_left": tls.days_left,
            "issuer": tls.issuer,
        }
    if result.status == "tls":
        return verdict(spec, "failed", result.reason, **dates)
    if tls is None or not tls.verified:
        return verdict(spec, "unverified", "not_reached")
    warn_days = int(spec.params["warn_days"])
    if tls.days_left is not None and tls.days_left < warn_days:
        return verdict(spec, "observed_risk", "expires_soon", warn_days=warn_days, **dates)
    return verdict(spec, "verified", **dates)


def redirect_policy(facts: Facts, spec: CheckSpec) -> CheckVerdict:
    """No redirect at the endpoint; a same-origin 307/308 is a risk; anything else fails."""
    result = facts.result
    if result.status != "redirect":
        if facts.evidence.answered:
            return verdict(spec, "verified")
        return verdict(spec, "unverified", "not_reached")
    evidence = {"http_status": result.http_status, "location": result.location}
    # WHATWG URL parsing (what browsers and Node's fetch follow) reads "\" as "/" in http(s)
    # URLs, so "\\evil.example/x" leaves the origin; read it the same way.
    location = result.location.replace("\\", "/") if result.location else None
    try:
        target = urljoin(result.url, location) if location else ""
        urlsplit(target).port  # noqa: B018  (raises for a port that is not a number)
    except ValueError:  # not a URL at all (an unclosed IPv6 literal, a bad port, ...)
        target = ""
    if not target:
        return verdict(spec, "failed", "location_missing", **evidence)
    if urlsplit(result.url).scheme == "https" and urlsplit(target).scheme == "http":
        return verdict(spec, "failed", "downgrade", **evidence)
    if not same_origin(target, result.url):
        return verdict(spec, "failed", "cross_origin", **evidence)
    if result.http_status not in (307, 308):
        return verdict(spec, "failed", "method_changing", **evidence)
    return verdict(spec, "observed_risk", "same_origin_redirect", **evidence)


def auth_metadata(facts: Facts, spec: CheckSpec) -> CheckVerdict:
    """A discoverable sign-in wall: challenge grammar, RFC 9728 metadata, resource and scopes."""
    result = facts.result
    auth = result.auth
    if not facts.gated or auth is None:
        if facts.evidence.answered:
            return verdict(spec, "unverified", "not_applicable", gated=False)
        return verdict(spec, "unverified", "not_reached")
    problems: list[str] = []
    challenge = auth.challenge
    grammar: list[str] = []
    schemes: list[str] = []
    if challenge is None:
        problems.append("challenge_missing")
    else:
        if challenge.well_formed is False:
            problems.append("challenge_malformed")
            grammar = list(challenge.problems)
        schemes = [c.scheme for c in challenge.challenges] or ([challenge.scheme] if challenge.scheme else [])
        if not any(s.lower() == "bearer" for s in schemes):
            problems.append("no_bearer_challenge")
    metadata = auth.metadata
    if metadata is None and (ours := _not_fetched(auth)):
        # Our own limits kept the probe from a metadata URL (pacing, the opt-out list, its budget):
        # that the server publishes none is not observed.
        reason = "budget_exhausted" if all(look.failed == "probe_deadline" for look in ours) else "withheld"
        not_fetched = [{"url": look.url, "refused": look.refused, "failed": look.failed} for look in ours]
        return verdict(spec, "unverified", reason, metadata_not_fetched=not_fetched)
    if metadata is None:
        problems.append("metadata_missing")
    else:
        if not metadata.resource_matches:
            problems.append("resource_mismatch")
        if not metadata.authorization_servers:
            problems.append("no_authorization_servers")
        scopes = (challenge.scope or "").split() if challenge is not None else []
        outside = [s for s in scopes if metadata.scopes_supported and s not in metadata.scopes_supported]
        if outside:
            problems.append("scope_not_supported")
    evidence = {
        "problems": problems,
        "challenge_schemes": schemes,
        "grammar_problems": grammar,
        "metadata_url": metadata.url if metadata else None,
        "resource": metadata.resource if metadata else None,
        "authorization_servers": metadata.authorization_servers if metadata else [],
        "scopes_supported": metadata.scopes_supported if metadata else [],
        "challenge_scope": challenge.scope if challenge else None,
    }
    if problems:
        return verdict(spec, "failed", problems[0], **evidence)
    return verdict(spec, "verified", **evidence)


#: Lookup refusals that are our own limits, not the server's doing: the host's turn did not come,
#: or the opt-out list kept it (a probe job's).
_OURS = frozenset({"target_busy", "opted_out", "optout_unavailable"})


def _not_fetched(auth: AuthInfo) -> list[MetadataLookup]:
    """The metadata lookups our own limits stopped (refused by them, or cut by the probe's budget)."""
    return [look for look in auth.lookups if look.refused in _OURS or look.failed == "probe_deadline"]


def tool_description_hygiene(facts: Facts, spec: CheckSpec) -> CheckVerdict:
    """One finding per tool and rule, or clean over a complete list."""
    result = facts.result
    if result.tools is None or not facts.handshake_done:
        return blocked(facts, spec)
    scanned = len(facts.evidence.tool_entries)
    if facts.hygiene:
        shown = facts.hygiene[:MAX_FINDINGS]
        return verdict(spec, "observed_risk", "findings", scanned=scanned, total=len(facts.hygiene), findings=shown)
    if not facts.whole_list:
        return verdict(spec, "unverified", "list_incomplete", scanned=scanned)
    return verdict(spec, "verified", scanned=scanned)
