"""The full check result: the probe's result plus one verdict per check of the catalogue.

Facts, never one combined score: each check has its own state (``verified``, ``failed``,
``observed_risk``, ``unverified``) and a reason key the catalogue allows for that state; an
``unverified`` verdict always says why. The model enforces both, so no code path can emit a
verdict the catalogue does not document.

Evidence holds cleaned facts only (server text passes :mod:`app.probe.text` first); the
result as a whole keeps ``untrusted_content: true``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, model_validator

from app.drift.tools import ToolListDiff
from app.probe.result import ProbeResult
from app.suite.catalogue import State, catalogue


class CheckVerdict(BaseModel):
    """One check's verdict."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    state: State
    reason: str | None = Field(default=None, description="A reason key the catalogue allows for this state.")
    evidence: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _allowed_by_catalogue(self) -> CheckVerdict:
        spec = catalogue().checks.get(self.id)
        if spec is None:
            raise ValueError(f"unknown check {self.id!r}")
        if not spec.allows(self.state, self.reason):
            raise ValueError(f"check {self.id!r} may not be {self.state!r} with reason {self.reason!r}")
        return self


class SuiteInfo(BaseModel):
    """Which suite judged the result: its id and the digest of its catalogue."""

    model_config = ConfigDict(extra="forbid")
    id: str
    catalogue_sha256: str


class CategoryInfo(BaseModel):
    """A category assigned from tool names, and the words that decided it."""

    model_config = ConfigDict(extra="forbid")
    topic: str
    words: list[str]
    tools: int = Field(description="Tools whose names name the topic.")
    total: int = Field(description="All tools considered.")
    source: str = "tool_names"


class ToolDefinition(BaseModel):
    """A tool as listed, cleaned and capped (opt-in: ``"include": ["tools"]``)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, serialize_by_alias=True)
    name: str
    title: str | None = None
    description: str | None = None
    input_schema: Any = Field(default=None, alias="inputSchema")
    output_schema: Any = Field(default=None, alias="outputSchema")
    annotations: dict[str, Any] | None = None


class BaselineComparison(BaseModel):
    """What the check was compared with, and the difference from it to the list served now."""

    model_config = ConfigDict(extra="forbid")
    source: Literal["run", "fingerprint", "tools", "approved"] = Field(
        description="How the baseline was named: a stored run, a schema fingerprint, tool definitions "
        "in the request, or the baseline approved for this server."
    )
    run_id: str | None = Field(default=None, description="The stored run whose list is the baseline, if named so.")
    schema_fingerprint: str | None = None
    toolset_fingerprint: str | None = None
    tools: int = Field(description="Tools in the baseline.")
    approved_at: AwareDatetime | None = Field(default=None, description="For an approved baseline: when.")
    approved_by: Literal["host_proof", "payment"] | None = Field(
        default=None, description="For an approved baseline: by proof of control of the host, or by a payment."
    )
    diff: ToolListDiff | None = Field(
        default=None, description="From the baseline to the list served now; null when the list was not read in full."
    )


class CheckResult(ProbeResult):
    """A full check: the probe's facts, the suite's verdicts, fingerprints and category.

    Attributes:
        checks: one verdict per check of the catalogue, in catalogue order.
        suite: the suite id and the digest of its catalogue.
        toolset_fingerprint, schema_fingerprint: hex SHA-256 (``docs/fingerprints.md``), when
            the tool list was read in full and could be put in canonical form.
        category: the topic the tool names point to, if the rule assigns one.
        credentialed: the check ran with the caller's own credentials (never cached or shared).
        credential_headers: the names of those headers (never their values).
        tool_definitions: the tools as listed, cleaned and capped; only when asked for.
        baseline: the comparison with a baseline, when there was one (:mod:`app.baselines.compare`).
        attestation_id, attestation: the signed statement of a served check (a DSSE envelope,
            ``docs/attestations.md``) and its id; ``None`` where nothing was signed (the CLI).
    """

    checks: list[CheckVerdict] = Field(default_factory=list)
    suite: SuiteInfo
    toolset_fingerprint: str | None = None
    schema_fingerprint: str | None = None
    category: CategoryInfo | None = None
    credentialed: bool = False
    credential_headers: list[str] = Field(default_factory=list)
    tool_definitions: list[ToolDefinition] | None = None
    baseline: BaselineComparison | None = Field(
        default=None, description="The baseline the request named (or the approved one), and the diff against it."
    )
    attestation_id: str | None = Field(default=None, description="SHA-256 (hex) of the envelope's payload.")
    attestation: dict[str, Any] | None = Field(
        default=None, description="The DSSE envelope of the in-toto statement of this check."
    )
