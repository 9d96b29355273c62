"""The answers of :mod:`app.drift`, as API models (unknown fields are refused)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.drift.rules import FindingVerdict, Verdict

Direction = Literal["input", "output"]
Reading = Literal["declared", "strict"]
Answer = Literal["yes", "no", "unknown"]


class Example(BaseModel):
    """An instance that shows a break: valid under the schema a client relied on, invalid under
    the other (for an input: an old call the new schema rejects; for an output: a new output
    the old schema rejects). Checked against both whole schemas before it is given."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    instance: Any


class Finding(BaseModel):
    """One difference between two schemas and what it does."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    pointer: str = Field(
        description="RFC 6901 pointer to the keyword in the new schema, or in the old one when the new has none."
    )
    verdict: FindingVerdict
    rule: str = Field(description="A rule key of docs/drift.md; for an undecidable question, its reason key.")
    old: Any = None
    new: Any = None
    reason: str | None = Field(default=None, description="Why the finding is unknown (a reason key).")
    example: Example | None = None


class SchemaDiff(BaseModel):
    """The verdict on a change of one schema, with its findings."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    verdict: Verdict
    direction: Direction
    findings: list[Finding] = Field(default_factory=list)
    reasons: list[str] = Field(default_factory=list, description="The reason keys of the unknown findings, sorted.")


class Admission(BaseModel):
    """Whether one schema admits every instance of another."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    answer: Answer
    witness: Finding | None = Field(default=None, description="For ``no``: the first finding that shows it.")
    reason: str | None = Field(default=None, description="For ``unknown``: the first reason.")
    findings: list[Finding] = Field(default_factory=list)
