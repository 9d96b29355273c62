"""The record a probe fills in (:mod:`app.probe.findings`) and the result it turns into.

``tests/data/probe/results.json`` holds results of probes of the test servers (the probe, TLS,
auth, legacy SSE and suite tests, one of each reason and of each field a probe fills in), as
served when they were recorded: each one's JSON, and the ``model_dump`` that a record filled in
with the same facts gave then. A record filled in again from each must give the same bytes.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from app.probe.classify import Verdict
from app.probe.findings import Findings, StepTimes
from app.probe.result import ProbeResult, Timings

RESULTS = Path(__file__).resolve().parent.parent / "data" / "probe" / "results.json"
RECORDED: list[dict[str, str]] = json.loads(RESULTS.read_text())


def refill(served: str) -> Findings:
    """A record filled in with the facts of the served result ``served``, as a probe fills it in."""
    result = ProbeResult.model_validate_json(served)
    document: dict[str, Any] = json.loads(served)
    findings = Findings(url=result.url, checked_at=datetime.fromisoformat(document["checked_at"]), light=result.light)
    findings.addresses = list(result.addresses)
    findings.era, findings.transport, findings.protocol_version = result.era, result.transport, result.protocol_version
    findings.server, findings.capabilities, findings.instructions = (
        result.server,
        result.capabilities,
        result.instructions,
    )
    findings.latency_ms, findings.http_status = result.latency_ms, result.http_status
    findings.tools, findings.session, findings.auth, findings.tls = (
        result.tools,
        result.session,
        result.auth,
        result.tls,
    )
    for name, value in result.timings:
        setattr(findings.timings, name, value)
    for key in result.warnings:
        findings.warn(key)
    if result.status != "ok":
        assert result.failed_step is not None
        findings.fail(result.failed_step, Verdict(result.reason, result.detail, result.retry_after, result.location))
    return findings


def test_the_recorded_results_cover_the_probe() -> None:
    documents = [json.loads(entry["result"]) for entry in RECORDED]
    assert len({document["reason"] for document in documents}) >= 40
    for name in ("server", "tools", "session", "auth", "tls", "instructions", "detail", "retry_after", "location"):
        assert any(document[name] is not None for document in documents), name
    assert {document["transport"] for document in documents} == {None, "streamable_http", "sse"}
    assert any(document["light"] for document in documents) and any(document["warnings"] for document in documents)


@pytest.mark.parametrize("entry", RECORDED, ids=[entry["probe"] for entry in RECORDED])
def test_a_result_is_served_as_it_was_recorded(entry: dict[str, str]) -> None:
    result = refill(entry["result"]).to_result()
    assert result.model_dump_json() == entry["result"]
    assert repr(result.model_dump()) == entry["dump"]
    assert list(result.model_dump()) == list(ProbeResult.model_fields) == list(json.loads(entry["result"]))


def test_timings_are_the_step_times() -> None:
    assert list(Timings.model_fields) == list(vars(StepTimes()))
    times = StepTimes(dns_ms=1.5, total_ms=40.0)
    assert Timings.model_validate(vars(times)).model_dump() == vars(times)
