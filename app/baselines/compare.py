"""A full check compared with a baseline: the two ``*_vs_baseline`` verdicts and the diff.

Policy:

- The suite judges ``toolset_unchanged_vs_baseline`` and ``schema_unchanged_vs_baseline``
  ``unverified`` with ``no_baseline`` whenever the tool list was read in full
  (:mod:`app.suite.drift`); :func:`compared` replaces those two verdicts, and only those: a
  list not read in full (``list_incomplete``), a step not reached or a credential gate stays as
  judged, since nothing exact can be said of a list not in hand.
- Both sides are compared as :func:`app.drift.diff_tools` compares tool lists (names matched
  after NFC, whole JSON Schemas walked, ``docs/drift.md``): the list served now is the result's
  cleaned definitions (:mod:`app.suite.definitions`); a baseline given as definitions in the
  request is cleaned the same way first, so a cut a cleaning makes is never a change. Its
  fingerprints are those of the definitions as given (``docs/fingerprints.md``).
- ``toolset_unchanged_vs_baseline``: ``verified`` when both list the same names, else ``failed``
  (``toolset_changed``) with the names added and removed, and the likely renames. Where both
  toolset fingerprints are known (they are of the names as listed, before any cleaning) they
  decide: names that differ only past what a cleaned definition keeps (128 characters, control
  characters) are a change all the same (evidence ``beyond_kept_definitions``).
- ``schema_unchanged_vs_baseline``: ``verified`` when no tool both list changed its
  ``inputSchema`` or ``outputSchema``, else ``failed`` with the verdict of the worst such change
  for a client as the reason: ``schema_breaking``, then ``schema_unknown``, then
  ``schema_compatible``. With the same names on both sides, the schema fingerprints (of the
  input schemas as listed) decide too: different prints with no change found in the cleaned
  definitions (a change deeper than 12 levels, past 256 members, in a long string) are
  ``schema_unknown`` with ``beyond_kept_definitions``.
- Evidence lists at most :data:`EVIDENCE_NAMES` names each (counts are whole); the result's
  ``baseline`` member holds the whole diff.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from app.canonical import CanonicalFormError
from app.drift import ToolListDiff, diff_tools
from app.suite.definitions import definitions
from app.suite.fingerprint import fingerprints
from app.suite.model import BaselineComparison, CheckResult, CheckVerdict

TOOLSET = "toolset_unchanged_vs_baseline"
SCHEMA = "schema_unchanged_vs_baseline"
#: Names each list of the evidence holds at most.
EVIDENCE_NAMES = 50
_SCHEMA_CHANGES = ("input_schema_changed", "output_schema_changed")
_WORST = ("breaking", "unknown", "compatible")

Source = Literal["run", "fingerprint", "tools", "approved"]
Approver = Literal["host_proof", "payment"]


@dataclass(frozen=True)
class Reference:
    """A baseline as the service found it: a stored list (by run, fingerprint or approval) or
    definitions from the request."""

    source: Source
    definitions: Sequence[Mapping[str, Any]]
    run_id: str | None = None
    schema_fingerprint: str | None = None
    toolset_fingerprint: str | None = None
    approved_at: datetime | None = None
    approved_by: Approver | None = None


def from_request(tools: Sequence[Mapping[str, Any]]) -> Reference:
    """The baseline of tool definitions given in a request (raw ``tools/list`` entries)."""
    toolset: str | None = None
    schema: str | None = None
    try:
        prints = fingerprints(tools)
        toolset, schema = prints.toolset, prints.schema
    except CanonicalFormError:
        pass
    cleaned = [tool.model_dump(mode="json", by_alias=True) for tool in definitions(tools)]
    return Reference("tools", cleaned, schema_fingerprint=schema, toolset_fingerprint=toolset)


def _pending(result: CheckResult) -> bool:
    """Whether the suite left the comparison to a baseline (the list was read in full)."""
    return any(v.id in (TOOLSET, SCHEMA) and v.reason == "no_baseline" for v in result.checks)


def needs_diff(result: CheckResult) -> bool:
    """Whether :func:`compared` would compute a diff for ``result`` (callers may run it on a thread)."""
    return _pending(result) and result.tool_definitions is not None


def _names(names: Sequence[str]) -> list[str]:
    return list(names[:EVIDENCE_NAMES])


def _differ(now: str | None, then: str | None) -> bool:
    """Two fingerprints, both known, that differ."""
    return now is not None and then is not None and now != then


def _toolset_verdict(diff: ToolListDiff, reference: Reference, result: CheckResult) -> CheckVerdict:
    added = [c.name for c in diff.tools if c.change == "added"]
    removed = [c.name for c in diff.tools if c.change == "removed"]
    evidence: dict[str, Any] = {"source": reference.source, "tools": diff.counts.after}
    if not added and not removed:
        if _differ(result.toolset_fingerprint, reference.toolset_fingerprint):
            evidence |= {"added": [], "removed": [], "renamed": [], "beyond_kept_definitions": True}
            evidence["counts"] = {"added": 0, "removed": 0, "renamed": 0}
            return CheckVerdict(id=TOOLSET, state="failed", reason="toolset_changed", evidence=evidence)
        return CheckVerdict(id=TOOLSET, state="verified", evidence=evidence)
    renamed = [
        {"from": c.name, "to": c.hint.renamed_to} for c in diff.tools if c.hint is not None and c.hint.renamed_to
    ]
    evidence |= {
        "added": _names(added), "removed": _names(removed), "renamed": renamed[:EVIDENCE_NAMES],
        "counts": {"added": len(added), "removed": len(removed), "renamed": len(renamed)},
    }  # fmt: skip
    return CheckVerdict(id=TOOLSET, state="failed", reason="toolset_changed", evidence=evidence)


def _schema_verdict(diff: ToolListDiff, reference: Reference, result: CheckResult) -> CheckVerdict:
    changed = [c for c in diff.tools if c.change in _SCHEMA_CHANGES]
    evidence: dict[str, Any] = {"source": reference.source}
    same_names = not _differ(result.toolset_fingerprint, reference.toolset_fingerprint) and not any(
        c.change in ("added", "removed") for c in diff.tools
    )
    if not changed and same_names and _differ(result.schema_fingerprint, reference.schema_fingerprint):
        evidence |= {"changed": [], "count": 0, "beyond_kept_definitions": True}
        return CheckVerdict(id=SCHEMA, state="failed", reason="schema_unknown", evidence=evidence)
    if not changed:
        return CheckVerdict(id=SCHEMA, state="verified", evidence=evidence | {"compared": diff.counts.unchanged})
    worst = next(v for v in _WORST if any(c.verdict == v for c in changed))
    evidence["changed"] = [{"tool": c.name, "change": c.change, "verdict": c.verdict} for c in changed][:EVIDENCE_NAMES]
    evidence["count"] = len(changed)
    return CheckVerdict(id=SCHEMA, state="failed", reason=f"schema_{worst}", evidence=evidence)


def compared(result: CheckResult, reference: Reference | None, *, unavailable: bool = False) -> CheckResult:
    """``result`` with its two baseline verdicts judged against ``reference`` and the comparison
    in ``baseline`` (see the module docs); with no reference, unchanged unless the approved
    baseline could not be read (``unavailable``: ``baseline_unavailable``)."""
    if reference is None:
        if not unavailable or not _pending(result):
            return result
        checks = [
            CheckVerdict(id=v.id, state="unverified", reason="baseline_unavailable")
            if v.id in (TOOLSET, SCHEMA) and v.reason == "no_baseline"
            else v
            for v in result.checks
        ]
        return result.model_copy(update={"checks": checks})
    diff = None
    checks = list(result.checks)
    if needs_diff(result):
        assert result.tool_definitions is not None
        diff = diff_tools(list(reference.definitions), result.tool_definitions)
        judged = {TOOLSET: _toolset_verdict(diff, reference, result), SCHEMA: _schema_verdict(diff, reference, result)}
        checks = [judged.get(v.id, v) if v.reason == "no_baseline" else v for v in checks]
    comparison = BaselineComparison(
        source=reference.source, run_id=reference.run_id, schema_fingerprint=reference.schema_fingerprint,
        toolset_fingerprint=reference.toolset_fingerprint, tools=len(reference.definitions),
        approved_at=reference.approved_at, approved_by=reference.approved_by, diff=diff,
    )  # fmt: skip
    return result.model_copy(update={"checks": checks, "baseline": comparison})
