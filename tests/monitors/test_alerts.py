"""The alert rules, table by table: two runs in a row before a status change alerts, a
certificate expiring soon alerts once per certificate, the first run only sets the baseline."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.history.records import Change
from app.monitors.alerts import (
    CERTIFICATE_EXPIRING,
    STATUS_CHANGED,
    TOOLS_CHANGED,
    Alert,
    Watch,
    assess,
    certificate_rule,
    status_rule,
)

NOW = datetime(2027, 1, 10, 12, 0, tzinfo=UTC)


def changes_of(statuses: list[str]) -> list[tuple[str, str]]:
    watch, raised = Watch(), []
    for status in statuses:
        watch, alert = status_rule(watch, status, f"{status}_reason")
        if alert is not None:
            assert alert.event == STATUS_CHANGED
            raised.append((alert.data["from"], alert.data["to"]))
    return raised


@pytest.mark.parametrize(
    ("statuses", "alerts"),
    [
        (["ok"], []),  # the first run sets the baseline
        (["timeout"], []),  # whatever it is
        (["ok", "ok", "timeout", "ok"], []),  # one blip is not an outage
        (["ok", "timeout", "timeout"], [("ok", "timeout")]),
        (["ok", "timeout", "timeout", "timeout"], [("ok", "timeout")]),  # once, not at every run
        (["ok", "timeout", "timeout", "ok"], [("ok", "timeout")]),  # back up once: a blip again
        (["ok", "timeout", "timeout", "ok", "ok"], [("ok", "timeout"), ("timeout", "ok")]),
        (["ok", "timeout", "tls", "tls"], [("ok", "tls")]),  # two different failures do not agree
        (["ok", "timeout", "tls", "timeout"], []),
        (["ok", "skipped", "timeout", "skipped", "timeout"], [("ok", "timeout")]),  # a skip says nothing
        (["ok", "refused", "refused"], [("ok", "refused")]),  # the guard refused it at run time
        (["auth", "ok", "ok"], [("auth", "ok")]),
    ],
)
def test_a_status_change_needs_two_runs_in_a_row(statuses: list[str], alerts: list[tuple[str, str]]) -> None:
    assert changes_of(statuses) == alerts


def test_the_alert_says_why() -> None:
    watch = Watch("ok", "timeout")
    _, alert = status_rule(watch, "timeout", "timeout_initialize")
    assert alert == Alert(STATUS_CHANGED, {"from": "ok", "to": "timeout", "reason": "timeout_initialize"})


@pytest.mark.parametrize(
    ("days_left", "alerted"),
    [(30, False), (14.5, False), (14, True), (3, True), (-2, True)],
)
def test_a_certificate_within_14_days_alerts(days_left: float, alerted: bool) -> None:
    _, alert = certificate_rule(Watch(), NOW + timedelta(days=days_left), NOW, 14)
    assert (alert is not None) is alerted
    if alert is not None:
        assert alert.event == CERTIFICATE_EXPIRING
        assert alert.data["days_left"] == int(days_left) if days_left >= 0 else alert.data["days_left"] < 0


def test_a_certificate_alerts_once_and_a_new_one_again() -> None:
    first, second = NOW + timedelta(days=10), NOW + timedelta(days=12)
    watch, alert = certificate_rule(Watch("ok", "ok"), first, NOW, 14)
    assert alert is not None and watch.certificate_alerted == first
    again, none = certificate_rule(watch, first, NOW + timedelta(days=1), 14)
    assert none is None and again == watch
    _, renewed = certificate_rule(watch, second, NOW + timedelta(days=1), 14)
    assert renewed is not None and renewed.data["not_after"] == "2027-01-22T12:00:00Z"
    _, unknown = certificate_rule(watch, None, NOW, 14)
    assert unknown is None


def test_assess_orders_status_tools_then_certificate() -> None:
    change = Change(NOW, "r" * 64, ("a", "b"), ("c", "d"), "breaking", {"removed": ["echo"]})
    assessed = assess(
        Watch("ok", "timeout"), status="timeout", reason="timeout_initialize", change=change,
        not_after=NOW + timedelta(days=2), now=NOW, certificate_days=14,
    )  # fmt: skip
    assert [a.event for a in assessed.alerts] == [STATUS_CHANGED, TOOLS_CHANGED, CERTIFICATE_EXPIRING]
    tools = assessed.alerts[1].data
    assert (tools["verdict"], tools["breaking"], tools["diff"]) == ("breaking", True, {"removed": ["echo"]})
    assert tools["before"] == {"schema_fingerprint": "a", "toolset_fingerprint": "b"}
    assert assessed.watch == Watch("timeout", "timeout", NOW + timedelta(days=2))
