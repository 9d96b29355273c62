"""The check catalogue (``catalogue.yaml``), loaded and checked once.

Policy: the catalogue is the source of truth for which checks exist, which states each may
take and which reason keys each state may carry. :class:`~app.suite.model.CheckVerdict`
refuses any verdict the catalogue does not allow, so a judge cannot invent a reason. The
``failure_reasons`` entry ``probe_reasons`` admits every reason key of the probe
(:data:`app.probe.reasons.REASONS`), for checks that pass the probe's own verdict on.

The digest is SHA-256 over the canonical form of the parsed catalogue (:mod:`app.canonical`:
NFC, then RFC 8785; the catalogue is NFC text, so plain RFC 8785 gives the same bytes), so anyone
can recompute it from the JSON that ``GET /v1/checks`` serves.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final, Literal, get_args

import yaml

from app.canonical import sha256_hex
from app.probe.reasons import REASONS

State = Literal["verified", "failed", "observed_risk", "unverified"]
STATES: Final[tuple[str, ...]] = get_args(State)
PROBE_REASONS: Final = "probe_reasons"
#: The unverified reason of a judge that raised (a bug of ours); allowed for every check.
JUDGE_FAILED: Final = "judge_failed"


@dataclass(frozen=True)
class CheckSpec:
    """One check of the catalogue."""

    id: str
    group: str
    title: str
    states: frozenset[str]
    failure_reasons: frozenset[str]
    risk_reasons: frozenset[str]
    unverified: frozenset[str]
    params: dict[str, Any]

    def allows(self, state: str, reason: str | None) -> bool:
        """Whether ``state`` with ``reason`` is a verdict this check may give."""
        if state not in self.states:
            return False
        if state == "verified":
            return reason is None
        if state == "unverified":
            return reason in self.unverified or reason == JUDGE_FAILED
        if state == "observed_risk":
            return reason in self.risk_reasons
        return reason in self.failure_reasons or (PROBE_REASONS in self.failure_reasons and reason in REASONS)


@dataclass(frozen=True)
class Catalogue:
    """The parsed catalogue: the document as served, its digest, and the checks by id."""

    document: dict[str, Any]
    sha256: str
    checks: dict[str, CheckSpec]

    @property
    def suite_id(self) -> str:
        """``<suite>/v<version>``, e.g. ``mcp-sonde/checks/v1``."""
        return f"{self.document['suite']}/v{self.document['version']}"


def _spec(entry: dict[str, Any], reasons: dict[str, str]) -> CheckSpec:
    states = {"verified", "unverified"} | {s for s in ("failed", "observed_risk") if s in entry}
    spec = CheckSpec(
        id=entry["id"],
        group=entry["group"],
        title=entry["title"],
        states=frozenset(states),
        failure_reasons=frozenset(entry.get("failure_reasons", [])),
        risk_reasons=frozenset(entry.get("risk_reasons", [])),
        unverified=frozenset(entry.get("unverified", [])),
        params=dict(entry.get("params", {})),
    )
    unknown = spec.unverified - set(reasons)
    if unknown:
        raise ValueError(f"check {spec.id}: unknown unverified reasons {sorted(unknown)}")
    if ("failed" in states) != bool(spec.failure_reasons) or ("observed_risk" in states) != bool(spec.risk_reasons):
        raise ValueError(f"check {spec.id}: every failed or observed_risk state needs its reason keys")
    return spec


@functools.cache
def catalogue() -> Catalogue:
    """The catalogue, loaded once from the package data.

    Raises:
        ValueError: the file breaks the rules above (a packaging fault, caught by the tests).
    """
    text = resources.files("app.suite").joinpath("catalogue.yaml").read_text("utf-8")
    document = yaml.safe_load(text)
    if set(document["states"]) != set(STATES):
        raise ValueError("the catalogue's states differ from the model's")
    checks = {entry["id"]: _spec(entry, document["unverified_reasons"]) for entry in document["checks"]}
    if len(checks) != len(document["checks"]):
        raise ValueError("check ids must be unique")
    digest = sha256_hex(document)
    return Catalogue(document=document, sha256=digest, checks=checks)
