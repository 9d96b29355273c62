"""The suite: from a probe's observation to a full check result.

Order: derive what several judges share (fingerprints over a complete list, the hygiene scan,
the category), then run every judge of the catalogue, in catalogue order. Every check of the
catalogue gets exactly one verdict; a judge that raises is a bug of ours, logged, and its check
is ``unverified`` with ``judge_failed`` (never a verdict about the server, never a 500).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from typing import Any

from app.canonical import CanonicalFormError
from app.probe.runner import Observation
from app.suite import drift, proto, reach, sec
from app.suite.catalogue import JUDGE_FAILED, CheckSpec, catalogue
from app.suite.category import categorise
from app.suite.definitions import definitions
from app.suite.facts import Facts
from app.suite.fingerprint import fingerprints
from app.suite.hygiene import scan_tools
from app.suite.memo import Memo
from app.suite.model import CategoryInfo, CheckResult, CheckVerdict, SuiteInfo

logger = logging.getLogger("mcp_sonde.checks")
Judge = Callable[[Facts, CheckSpec], CheckVerdict]

JUDGES: dict[str, Judge] = {
    "reachability": reach.reachability,
    "transport": reach.transport,
    "protocol_revision": proto.protocol_revision,
    "handshake": proto.handshake,
    "tools_list": proto.tools_list,
    "error_taxonomy": proto.error_taxonomy,
    "tls_certificate": sec.tls_certificate,
    "redirect_policy": sec.redirect_policy,
    "auth_metadata": sec.auth_metadata,
    "tool_description_hygiene": sec.tool_description_hygiene,
    "toolset_fingerprint": drift.toolset_fingerprint,
    "schema_fingerprint": drift.schema_fingerprint,
    "toolset_unchanged_vs_baseline": drift.toolset_unchanged_vs_baseline,
    "schema_unchanged_vs_baseline": drift.schema_unchanged_vs_baseline,
    "latency": reach.latency,
}


#: Fingerprints of tool lists seen lately, by the SHA-256 of the list's JSON text: servers list the
#: same tools check after check, and the canonical form is the dearest part of a fingerprint.
_PRINTS: Memo[bytes, tuple[str | None, str | None, str | None]] = Memo(1024)


def _fingerprints(entries: list[dict[str, Any]]) -> tuple[str | None, str | None, str | None]:
    """``(toolset, schema, error reason)`` of a complete list.

    The memo key is the C encoder's text of the list: entries come from replies parsed at most
    ``REPLY_DEPTH`` (256) levels deep, shallow enough for it whatever the recursion limit.
    """
    try:
        key: bytes | None = hashlib.sha256(
            json.dumps(entries, sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogatepass")
        ).digest()
    except (TypeError, ValueError, RecursionError):
        key = None
    known = _PRINTS.get(key) if key is not None else None
    if known is not None:
        return known
    try:
        prints = fingerprints(entries)
        known = (prints.toolset, prints.schema, None)
    except CanonicalFormError as exc:
        known = (None, None, exc.reason)
    if key is not None:
        _PRINTS.put(key, known)
    return known


def derive(observation: Observation) -> Facts:
    """The facts the judges read (see the module docs)."""
    evidence = observation.evidence
    toolset = schema = error = None
    if evidence.list_complete and not evidence.entries_capped:
        toolset, schema, error = _fingerprints(evidence.tool_entries)
    findings = [{"rule": f.rule, "tool": f.tool, "excerpt": f.excerpt} for f in scan_tools(evidence.tool_entries)]
    return Facts(
        result=observation.result,
        evidence=evidence,
        toolset_fingerprint=toolset,
        schema_fingerprint=schema,
        fingerprint_error=error,
        hygiene=findings,
    )


def judge(facts: Facts) -> list[CheckVerdict]:
    """One verdict per check of the catalogue, in catalogue order.

    A judge that raises is a bug of ours: it is logged, and that one check is ``unverified``
    with ``judge_failed``; the other verdicts and the probe's facts are still served.
    """
    verdicts = []
    for check_id, spec in catalogue().checks.items():
        try:
            verdicts.append(JUDGES[check_id](facts, spec))
        except Exception:
            logger.exception("the %s judge failed", check_id)
            verdicts.append(CheckVerdict(id=check_id, state="unverified", reason=JUDGE_FAILED))
    return verdicts


def full_result(
    observation: Observation, *, credential_headers: Sequence[str] = (), include_tools: bool = False
) -> CheckResult:
    """The full check result of an observation.

    Args:
        observation: the probe's result and evidence.
        credential_headers: the names (only) of a credentialed check's headers.
        include_tools: add the cleaned tool definitions.

    Every part is already validated (the probe's result, each verdict against the catalogue),
    so the result is assembled without validating it all again.
    """
    facts = derive(observation)
    names = [entry["name"] for entry in observation.evidence.tool_entries]
    category = categorise(names)
    fields = {name: getattr(observation.result, name) for name in type(observation.result).model_fields}
    return CheckResult.model_construct(
        **fields,
        checks=judge(facts),
        suite=SuiteInfo(id=catalogue().suite_id, catalogue_sha256=catalogue().sha256),
        toolset_fingerprint=facts.toolset_fingerprint,
        schema_fingerprint=facts.schema_fingerprint,
        category=CategoryInfo(
            topic=category.topic, words=list(category.words), tools=category.tools, total=category.total
        )
        if category is not None
        else None,
        credentialed=bool(credential_headers),
        credential_headers=list(credential_headers),
        tool_definitions=definitions(observation.evidence.tool_entries) if include_tools else None,
    )
