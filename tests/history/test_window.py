"""A history read summed up by the database (:mod:`app.history.window`) says what the pure
functions of :mod:`app.history.report` say of the same runs, on SQLite and PostgreSQL: run
count, latency percentiles of the runs that reached the server, status changes, and the limit."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from app.history import report
from app.history.records import server_id_of
from app.history.store import Point, SqlHistory
from tests.history.test_store import T0, run

pytestmark = pytest.mark.anyio
SERVER = server_id_of("https://mcp.example.com/mcp")
OUTCOMES = (
    ("ok", "ok"), ("ok", "ok"), ("ok", "ok"), ("auth", "auth_required"), ("timeout", "read_timeout"),
    ("unreachable", "connection_refused"), ("server_error", "http_server_error"), ("dns", "dns_nxdomain"),
)  # fmt: skip


def expected(points: list[Point]) -> tuple[int, dict[str, float | None], list[dict[str, str]]]:
    reached = [latency for _, status, _, latency in points if latency is not None and status not in report.UNREACHED]
    return len(points), report.percentiles(reached) | {"runs": len(reached)}, report.status_changes(points)


async def test_the_window_says_what_the_report_functions_say_of_the_points(history: SqlHistory) -> None:
    rng = random.Random(7)
    for n in range(120):
        status, reason = OUTCOMES[rng.randrange(len(OUTCOMES))]
        latency = None if status in ("timeout", "unreachable", "dns") and rng.random() < 0.8 else rng.choice(
            (12.5, 40.0, 41.5, 99.0, 350.25, 1200.0))  # fmt: skip
        await history.record(run(n, status=status, reason=reason, latency_ms=latency, tools=None))
    since = T0 + timedelta(hours=10)
    for limit in (30_000, 25, 1):
        points = await history.points(SERVER, since, limit)
        summary = await history.window(SERVER, since, limit)
        assert (summary.runs, summary.latency | {"runs": summary.reached}, summary.status_changes) == expected(points)
    assert (await history.window(SERVER, since)).status_changes  # (the sample has some)


async def test_an_unknown_server_has_an_empty_window(history: SqlHistory) -> None:
    summary = await history.window(server_id_of("https://other.example/mcp"), T0)
    assert (summary.runs, summary.reached, summary.status_changes) == (0, 0, [])
    assert summary.latency == {"p50_ms": None, "p90_ms": None, "p99_ms": None}
