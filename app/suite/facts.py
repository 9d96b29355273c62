"""What the judges read: the probe's result and evidence, and what the suite derived from them.

Every judge is a pure function ``(Facts, CheckSpec) -> CheckVerdict``; none opens a socket or
reads a clock. :func:`blocked` is the one rule for checks whose step did not run: such a check
is ``unverified`` with the reason (a credential gate, or not reached), never ``failed``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.probe.evidence import Evidence
from app.probe.result import ProbeResult
from app.suite.catalogue import CheckSpec
from app.suite.model import CheckVerdict


@dataclass(frozen=True)
class Facts:
    """Inputs of the judges.

    Attributes:
        result: the probe's result (cleaned facts).
        evidence: the probe's raw evidence.
        toolset_fingerprint, schema_fingerprint: computed over a complete list, if possible.
        fingerprint_error: the canonical-form reason key when the list could not be fingerprinted.
        hygiene: the hygiene findings, as dicts ``{rule, tool, excerpt}``.
    """

    result: ProbeResult
    evidence: Evidence
    toolset_fingerprint: str | None = None
    schema_fingerprint: str | None = None
    fingerprint_error: str | None = None
    hygiene: list[dict[str, str]] = field(default_factory=list)

    @property
    def gated(self) -> bool:
        """A credential gate (401, or 403 with a challenge) decided the probe."""
        return self.result.status == "auth"

    @property
    def whole_list(self) -> bool:
        """Every tool definition of a list read to its end is in hand (none dropped at the keep limit)."""
        return self.evidence.list_complete and not self.evidence.entries_capped

    @property
    def handshake_done(self) -> bool:
        """``server/discover`` or ``initialize`` completed."""
        return self.evidence.handshake is not None


def verdict(spec: CheckSpec, state: str, reason: str | None = None, /, **evidence: Any) -> CheckVerdict:
    """A verdict for ``spec`` (validated against the catalogue)."""
    return CheckVerdict.model_validate(
        {"id": spec.id, "state": state, "reason": reason, "evidence": {k: v for k, v in evidence.items()}}
    )


def blocked(facts: Facts, spec: CheckSpec, /, **evidence: Any) -> CheckVerdict:
    """The ``unverified`` verdict of a check whose step did not run."""
    if facts.gated:
        return verdict(spec, "unverified", "credential_required", **evidence)
    late = facts.evidence.answered and facts.result.reason == "probe_deadline"
    if late and "budget_exhausted" in spec.unverified:  # reached, then our own budget ran out
        return verdict(spec, "unverified", "budget_exhausted", **evidence)
    return verdict(spec, "unverified", "not_reached", **evidence)
