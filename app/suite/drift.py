"""Judges of the ``drift`` group: the fingerprints of the tool set and of its schemas.

A fingerprint is a fact about a complete list only (``docs/fingerprints.md``); a list read in
part has none, and a list that cannot be put in canonical form (names or keys that collide
after Unicode NFC, numbers outside I-JSON) fails with the canonical form's reason.
"""

from __future__ import annotations

from app.suite.catalogue import CheckSpec
from app.suite.facts import Facts, blocked, verdict
from app.suite.model import CheckVerdict


def _fingerprint(facts: Facts, spec: CheckSpec, value: str | None) -> CheckVerdict:
    if facts.result.tools is None or not facts.handshake_done:
        return blocked(facts, spec)
    if not facts.whole_list:
        return verdict(spec, "unverified", "list_incomplete")
    if value is None:
        return verdict(spec, "failed", "not_canonical", error=facts.fingerprint_error)
    return verdict(spec, "verified", sha256=value, tools=len(facts.evidence.tool_entries))


def toolset_fingerprint(facts: Facts, spec: CheckSpec) -> CheckVerdict:
    """SHA-256 of the sorted tool names."""
    return _fingerprint(facts, spec, facts.toolset_fingerprint)


def schema_fingerprint(facts: Facts, spec: CheckSpec) -> CheckVerdict:
    """SHA-256 of the sorted name and inputSchema pairs."""
    return _fingerprint(facts, spec, facts.schema_fingerprint)


def _versus_baseline(facts: Facts, spec: CheckSpec) -> CheckVerdict:
    """Before a baseline is known: ``no_baseline`` once the list is in hand (the service compares
    it with a baseline afterwards, :mod:`app.baselines.compare`)."""
    if facts.result.tools is None or not facts.handshake_done:
        return blocked(facts, spec)
    if not facts.whole_list:
        return verdict(spec, "unverified", "list_incomplete")
    return verdict(spec, "unverified", "no_baseline")


def toolset_unchanged_vs_baseline(facts: Facts, spec: CheckSpec) -> CheckVerdict:
    """The tool names against the baseline's (judged in :func:`app.baselines.compare.compared`)."""
    return _versus_baseline(facts, spec)


def schema_unchanged_vs_baseline(facts: Facts, spec: CheckSpec) -> CheckVerdict:
    """The tools' schemas against the baseline's (judged in :func:`app.baselines.compare.compared`)."""
    return _versus_baseline(facts, spec)
