"""The monitor source on SQLite and PostgreSQL, fed outcomes made of a real check of a real MCP
server: due runs as probe jobs, alerts as webhook deliveries (each once, whatever is heard
twice), a tool-list change read from the history, a certificate alert once, exhaustion once."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select

from app.db.tables.webhooks import webhook_deliveries
from app.history.records import server_id_of
from app.history.store import SqlHistory
from app.monitors import events
from app.monitors.alerts import Alert
from app.monitors.source import MonitorSource
from app.monitors.store import MonitorStore
from app.probe.tls import TlsInfo
from app.queue.model import PROBE, Job
from app.settings import Settings
from app.suite.model import CheckResult
from app.webhooks.secrets import WebhookSecrets
from tests.monitors.conftest import T0, later, make_monitor, outcome, stored_run

SETTINGS = Settings(public_url="https://sonde.example.org")


async def delivered_events(history: SqlHistory) -> list[tuple[str, dict[str, Any]]]:
    async with history.engine.connect() as db:
        rows = (await db.execute(select(webhook_deliveries).order_by(webhook_deliveries.c.id))).all()
    return [(row.event, json.loads(row.body)) for row in rows]


async def run_sequence(source: MonitorSource, checked: CheckResult, statuses: list[str], start: int = 0) -> list[Job]:
    jobs = []
    for n, status in enumerate(statuses, start):
        [job] = await source.due(later(5 * n + 0.5), 10)
        await source.finished(outcome(job, checked, status))
        jobs.append(job)
    return jobs


@pytest.mark.parametrize(
    ("statuses", "changes"),
    [
        (["ok", "ok", "timeout", "ok"], []),
        (["ok", "timeout", "timeout"], [("ok", "timeout")]),
        (["ok", "timeout", "timeout", "ok", "ok"], [("ok", "timeout"), ("timeout", "ok")]),
    ],
)
@pytest.mark.anyio
async def test_status_alerts_from_outcomes(
    history: SqlHistory, secrets: WebhookSecrets, checked: CheckResult, statuses: list[str],
    changes: list[tuple[str, str]],
) -> None:  # fmt: skip
    store = MonitorStore(history.engine)
    made, token = await make_monitor(store, secrets, checked.url, runs=10)
    source = MonitorSource(store, history, SETTINGS, clock=lambda: later(1))
    jobs = await run_sequence(source, checked, statuses)
    assert all((j.kind, j.source, j.ref, j.url) == (PROBE, "monitor", made.monitor_id, checked.url) for j in jobs)
    events = await delivered_events(history)
    assert [(b["data"]["from"], b["data"]["to"]) for _, b in events] == changes
    for event, body in events:
        assert event == body["type"] == "monitor.status_changed"
        data = body["data"]
        assert data["monitor_id"] == made.monitor_id and data["server_id"] == server_id_of(checked.url)
        assert token not in json.dumps(body)
    runs = await store.runs(made.key)
    assert [r.status for r in reversed(runs)] == statuses


@pytest.mark.anyio
async def test_an_outcome_heard_twice_alerts_once(
    history: SqlHistory, secrets: WebhookSecrets, checked: CheckResult
) -> None:
    store = MonitorStore(history.engine)
    await make_monitor(store, secrets, checked.url, runs=10)
    source = MonitorSource(store, history, SETTINGS, clock=lambda: later(1))
    await run_sequence(source, checked, ["ok", "timeout"])
    [job] = await source.due(later(20), 10)
    for _ in range(3):  # redelivered
        await source.finished(outcome(job, checked, "timeout"))
    await source.finished(outcome(replace(job, id="f" * 64), checked, "ok"))  # a run it never handed out
    await source.finished(outcome(replace(job, source="sweep"), checked, "ok"))  # another source's
    assert [e for e, _ in await delivered_events(history)] == ["monitor.status_changed"]


@pytest.mark.anyio
async def test_a_tool_list_change_alerts_with_its_verdict_and_diff(
    history: SqlHistory, secrets: WebhookSecrets, checked: CheckResult
) -> None:
    store = MonitorStore(history.engine)
    await make_monitor(store, secrets, checked.url, runs=10)
    source = MonitorSource(store, history, SETTINGS, clock=lambda: later(1))
    [first] = await source.due(later(0.5), 10)
    assert await history.record(stored_run(checked, first.id, later(0.5)))
    await source.finished(outcome(first, checked, stored=True))
    [second] = await source.due(later(5.5), 10)
    assert await history.record(stored_run(checked, second.id, later(5.5), drop_tools=1))
    await source.finished(outcome(second, checked, stored=True))
    [third] = await source.due(later(10.5), 10)  # the same list again: no change at this run
    assert await history.record(stored_run(checked, third.id, later(10.5), drop_tools=1))
    await source.finished(outcome(third, checked, stored=True))
    events = await delivered_events(history)
    assert [e for e, _ in events] == ["monitor.tools_changed"]
    data = events[0][1]["data"]
    assert data["run_id"] == second.id
    assert data["verdict"] == "breaking" and data["breaking"] is True  # a tool removed
    assert data["after"] == {"schema_fingerprint": "a" * 64, "toolset_fingerprint": "b" * 64}
    assert data["diff"]


def test_a_large_diff_is_left_out_and_linked() -> None:
    url = "https://mcp.example.com/mcp?key=secret-1"
    alert = Alert("monitor.tools_changed", {"verdict": "breaking", "diff": {"tools": ["x" * 5000]}})
    made = events.body(alert, monitor_id="mon_1", url=url, run_id="r" * 64, at=T0,
                       public_url="https://sonde.example.org", max_bytes=2048)  # fmt: skip
    data = json.loads(made)["data"]
    assert len(made) <= 2048 and data["diff"] is None and data["diff_omitted"] is True
    assert data["changes_url"] == f"https://sonde.example.org/v1/servers/{server_id_of(url)}/changes"
    assert data["url"] == "https://mcp.example.com/mcp" and b"secret-1" not in made  # never the query string
    whole = events.body(alert, monitor_id="mon_1", url=url, run_id=None, at=T0, public_url="", max_bytes=65536)
    assert json.loads(whole)["data"]["diff"] == {"tools": ["x" * 5000]}


@pytest.mark.anyio
async def test_a_certificate_expiring_alerts_once_per_certificate(
    history: SqlHistory, secrets: WebhookSecrets, checked: CheckResult
) -> None:
    store = MonitorStore(history.engine)
    await make_monitor(store, secrets, checked.url, runs=10)
    source = MonitorSource(store, history, SETTINGS, clock=lambda: T0)
    soon, renewed = T0 + timedelta(days=9), T0 + timedelta(days=13)
    for n, not_after in enumerate((T0 + timedelta(days=90), soon, soon, soon, renewed)):
        [job] = await source.due(later(5 * n + 0.5), 10)
        result = checked.model_copy(update={"tls": TlsInfo(verified=True, not_after=not_after)})
        await source.finished(outcome(job, result))
    events = await delivered_events(history)
    assert [(e, b["data"]["not_after"]) for e, b in events] == [
        ("monitor.certificate_expiring", "2027-01-19T12:00:00Z"),
        ("monitor.certificate_expiring", "2027-01-23T12:00:00Z"),
    ]
    assert events[0][1]["data"]["days_left"] == 9


@pytest.mark.anyio
async def test_the_last_run_of_the_block_says_the_monitor_is_exhausted(
    history: SqlHistory, secrets: WebhookSecrets, checked: CheckResult
) -> None:
    store = MonitorStore(history.engine)
    made, token = await make_monitor(store, secrets, checked.url, runs=2)
    source = MonitorSource(store, history, SETTINGS, clock=lambda: later(1))
    jobs = await run_sequence(source, checked, ["ok", "ok"])
    assert [j.data["last_run"] for j in jobs] == [False, True]
    assert await source.due(later(60), 10) == []
    [job] = jobs[-1:]
    await source.finished(outcome(job, checked))  # heard again
    events = await delivered_events(history)
    assert [(e, b["data"].get("runs_bought")) for e, b in events] == [("monitor.exhausted", 2)]
    current = await store.get(made.monitor_id, token)
    assert current is not None and (current.state, current.runs_left) == ("exhausted", 0)


@pytest.mark.anyio
async def test_server_text_is_never_markup_in_a_body(
    history: SqlHistory, secrets: WebhookSecrets, checked: CheckResult
) -> None:
    store = MonitorStore(history.engine)
    await make_monitor(store, secrets, checked.url, runs=10)
    source = MonitorSource(store, history, SETTINGS, clock=lambda: later(1))
    [first] = await source.due(later(0.5), 10)
    await source.finished(outcome(first, checked))
    for n in (1, 2):
        [job] = await source.due(later(5 * n + 0.5), 10)
        hostile = replace(outcome(job, checked, "timeout"), reason="<script>alert(1)</script>&")
        await source.finished(hostile)
    async with history.engine.connect() as db:
        raw = (await db.execute(select(webhook_deliveries.c.body))).scalar_one()
    assert b"<" not in raw and b">" not in raw and b"&" not in raw
    assert json.loads(raw)["data"]["reason"] == "<script>alert(1)</script>&"
