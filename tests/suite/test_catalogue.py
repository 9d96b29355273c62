"""The catalogue is the source of truth: every check judged, every verdict allowed by it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import rfc8785
from pydantic import ValidationError

from app.suite.catalogue import STATES, catalogue
from app.suite.judge import JUDGES
from app.suite.model import CheckVerdict

ROOT = Path(__file__).resolve().parents[2]


def test_every_check_has_a_judge_and_every_judge_a_check() -> None:
    assert list(catalogue().checks) == list(catalogue().document["checks"][i]["id"] for i in range(len(JUDGES)))
    assert set(catalogue().checks) == set(JUDGES)


def test_the_issue_names_are_all_checks() -> None:
    wanted = {
        "reachability",
        "transport",
        "protocol_revision",
        "handshake",
        "tools_list",
        "error_taxonomy",
        "tls_certificate",
        "redirect_policy",
        "auth_metadata",
        "tool_description_hygiene",
        "toolset_fingerprint",
        "schema_fingerprint",
        "latency",
    }
    assert wanted <= set(catalogue().checks)


def test_states_are_the_models() -> None:
    assert set(catalogue().document["states"]) == set(STATES)


@pytest.mark.parametrize(
    ("check_id", "state", "reason"),
    [
        ("transport", "unverified", None),  # an unverified verdict always says why
        ("transport", "unverified", "made_up"),
        ("transport", "verified", "not_reached"),  # verified carries no reason
        ("reachability", "observed_risk", "anything"),  # a state the check does not have
        ("latency", "failed", "slow_handshake"),
        ("tls_certificate", "failed", "no_such_reason"),
        ("no_such_check", "verified", None),
    ],
)
def test_the_model_refuses_verdicts_the_catalogue_does_not_allow(check_id: str, state: str, reason: str | None) -> None:
    with pytest.raises(ValidationError):
        CheckVerdict.model_validate({"id": check_id, "state": state, "reason": reason})


def test_probe_reasons_pass_through_where_the_catalogue_says_so() -> None:
    assert CheckVerdict(id="handshake", state="failed", reason="http_not_found").reason == "http_not_found"
    with pytest.raises(ValidationError):
        CheckVerdict(id="reachability", state="failed", reason="http_not_found")


def test_digest_is_recomputable_from_the_served_document() -> None:
    served = json.loads(json.dumps(catalogue().document))
    assert hashlib.sha256(rfc8785.dumps(served)).hexdigest() == catalogue().sha256


def test_no_judge_opens_a_socket() -> None:
    # The judging package reads evidence only: no network or clock imports in its modules.
    banned = ("httpx2", "httpcore2", "socket", "anyio", "asyncio", "ssl")
    for path in (ROOT / "app" / "suite").glob("*.py"):
        if path.name == "full.py":  # the one entry point that runs the probe, then judges
            continue
        text = path.read_text()
        for name in banned:
            assert f"import {name}" not in text and f"from {name}" not in text, (path.name, name)
