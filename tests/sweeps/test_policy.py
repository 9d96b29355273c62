"""The sweep policy's next due time, as a table."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.sweeps.policy import SweepPolicy, first_due, next_due, next_failures

NOW = datetime(2026, 6, 1, tzinfo=UTC)
POLICY = SweepPolicy()
H = 3600.0


@pytest.mark.parametrize(
    ("status", "reason", "failures", "least_h", "most_h"),
    [
        ("ok", "ok", 0, 24 * 0.9, 24 * 1.1),  # reached: a day, +/- 10 %
        ("not_mcp", "http_not_found", 0, 24 * 0.9, 24 * 1.1),  # an answer is up
        ("auth", "auth_required", 0, 24 * 0.9, 24 * 1.1),  # gated is up
        ("unreachable", "connect_refused", 1, 24, 24),  # first failure: a day
        ("timeout", "probe_timeout", 2, 48, 48),  # doubling
        ("dns", "dns_nxdomain", 3, 96, 96),
        ("tls", "tls_certificate_invalid", 4, 168, 168),  # capped at a week
        ("server_error", "http_server_error", 30, 168, 168),
        ("refused", "address_not_public", 5, 168, 168),  # the guard refused it: backs off too
        ("rate_limited", "rate_limited", 2, 6, 6),  # only a 429: the least interval
        ("skipped", "opted_out", 0, 168, 168),  # opted out: the longest
    ],
)
def test_next_due(status: str, reason: str, failures: int, least_h: float, most_h: float) -> None:
    for key in ("a", "b", "c", "d"):
        wait = (next_due(NOW, status, reason, failures, key, POLICY) - NOW).total_seconds() / H
        assert least_h - 1e-9 <= wait <= most_h + 1e-9
        assert POLICY.min_interval_s / H <= wait <= POLICY.max_interval_s / H


@pytest.mark.parametrize(
    ("failures", "status", "reason", "after"),
    [(0, "ok", "ok", 0), (3, "ok", "ok", 0), (0, "unreachable", "connect_refused", 1), (2, "timeout", "x", 3),
     (2, "rate_limited", "rate_limited", 2), (2, "skipped", "opted_out", 2)],
)  # fmt: skip
def test_consecutive_failures(failures: int, status: str, reason: str, after: int) -> None:
    assert next_failures(failures, status, reason) == after


def test_the_same_outcome_heard_twice_gives_the_same_time_and_jitter_spreads_keys() -> None:
    assert next_due(NOW, "ok", "ok", 0, "job-1", POLICY) == next_due(NOW, "ok", "ok", 0, "job-1", POLICY)
    times = {next_due(NOW, "ok", "ok", 0, f"job-{i}", POLICY) for i in range(100)}
    assert len(times) == 100


def test_62000_first_probes_are_spread_over_the_first_day() -> None:
    hours = [0] * 24
    for i in range(62_000):
        due = first_due(NOW, f"server-{i}", 86_400)
        assert NOW <= due < NOW + timedelta(days=1)
        hours[int((due - NOW).total_seconds() // 3600)] += 1
    assert max(hours) < 62_000 / 24 * 1.1 and min(hours) > 62_000 / 24 * 0.9
