"""Which alerts one monitor run raises: the rules, as pure functions of what the monitor knows.

Policy:

- **Status changed** (``monitor.status_changed``): a run's status is its check's status class
  (``ok``, ``auth``, ``timeout``, ..., or ``refused`` when the target guard refused the URL at
  run time; :mod:`app.probe.reasons`). The first run sets the baseline (``confirmed_status``)
  without an alert. A status differing from the confirmed one alerts only once two runs in a
  row agree on it: one blip is not an outage (ok, ok, down, ok: no alert; ok, down, down: one
  alert, from ok to down). A run that was skipped (``skipped``: the endpoint opted out) changes
  nothing.
- **Tools changed** (``monitor.tools_changed``): the history noted a change of the server's
  tool list at this run (:mod:`app.history.changes`): its verdict (``breaking``, ``unknown``,
  ``compatible``; docs/drift.md), the fingerprints before and after, and the diff.
- **Certificate expiring** (``monitor.certificate_expiring``): the endpoint's TLS certificate
  expires within :data:`CERTIFICATE_DAYS` (14): once per certificate (its
  ``not_after``), not at every run; a renewed certificate that expires soon again alerts again.
- **Exhausted** (``monitor.exhausted``): the block's last run finished; once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from app.history.records import Change

STATUS_CHANGED = "monitor.status_changed"
TOOLS_CHANGED = "monitor.tools_changed"
CERTIFICATE_EXPIRING = "monitor.certificate_expiring"
EXHAUSTED = "monitor.exhausted"
#: Every event type a monitor's webhook receives.
EVENTS = (STATUS_CHANGED, TOOLS_CHANGED, CERTIFICATE_EXPIRING, EXHAUSTED)
#: Outcome statuses that say nothing of the endpoint.
NOT_A_STATUS = frozenset({"skipped"})
#: A certificate expiring within this many days raises its alert (once per certificate).
CERTIFICATE_DAYS = 14


@dataclass(frozen=True)
class Watch:
    """What the rules remember of a monitor between runs."""

    confirmed_status: str | None = None
    last_status: str | None = None
    certificate_alerted: datetime | None = None


@dataclass(frozen=True)
class Alert:
    """One event to deliver: its type and its ``data`` (without the monitor's own fields)."""

    event: str
    data: dict[str, Any]


@dataclass(frozen=True)
class Assessed:
    """What a run changes: the monitor's new :class:`Watch` and the alerts raised."""

    watch: Watch
    alerts: list[Alert] = field(default_factory=list)


def status_rule(watch: Watch, status: str, reason: str) -> tuple[Watch, Alert | None]:
    """The two-in-a-row rule (see the module docs)."""
    if status in NOT_A_STATUS:
        return watch, None
    confirmed = watch.confirmed_status
    if confirmed is None:
        return Watch(status, status, watch.certificate_alerted), None
    alert = None
    if status != confirmed and status == watch.last_status:
        alert = Alert(STATUS_CHANGED, {"from": confirmed, "to": status, "reason": reason})
        confirmed = status
    return Watch(confirmed, status, watch.certificate_alerted), alert


def certificate_rule(watch: Watch, not_after: datetime | None, now: datetime, days: int) -> tuple[Watch, Alert | None]:
    """Once per certificate expiring within ``days`` (see the module docs)."""
    if not_after is None or not_after - now > timedelta(days=days) or watch.certificate_alerted == not_after:
        return watch, None
    left = (not_after - now).total_seconds() / 86_400
    data = {"not_after": moment(not_after), "days_left": int(left) if left >= 0 else -int(-left) - 1}
    return Watch(watch.confirmed_status, watch.last_status, not_after), Alert(CERTIFICATE_EXPIRING, data)


def tools_alert(change: Change) -> Alert:
    """The alert for a change of the tool list."""
    return Alert(
        TOOLS_CHANGED,
        {
            "verdict": change.verdict,
            "breaking": change.verdict == "breaking",
            "before": {"schema_fingerprint": change.before[0], "toolset_fingerprint": change.before[1]},
            "after": {"schema_fingerprint": change.after[0], "toolset_fingerprint": change.after[1]},
            "diff": change.diff,
        },
    )


def assess(
    watch: Watch,
    *,
    status: str,
    reason: str,
    change: Change | None,
    not_after: datetime | None,
    now: datetime,
    certificate_days: int,
) -> Assessed:
    """Every rule for one finished run, in the order its alerts are delivered."""
    alerts: list[Alert] = []
    watch, by_status = status_rule(watch, status, reason)
    if by_status is not None:
        alerts.append(by_status)
    if change is not None:
        alerts.append(tools_alert(change))
    watch, by_certificate = certificate_rule(watch, not_after, now, certificate_days)
    if by_certificate is not None:
        alerts.append(by_certificate)
    return Assessed(watch, alerts)


def moment(at: datetime) -> str:
    """``at`` as RFC 3339 UTC with a ``Z``."""
    return at.isoformat().replace("+00:00", "Z")
