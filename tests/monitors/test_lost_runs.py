"""Lost runs given back: a run handed out late is not lost at its own claim, a failing give-back
loses no claimed batch, and a block given back after its exhausted alert alerts again."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from app.history.store import SqlHistory
from app.monitors.alerts import Assessed
from app.monitors.store import MonitorStore
from app.webhooks.secrets import WebhookSecrets
from tests.monitors.conftest import T0, make_monitor

pytestmark = pytest.mark.anyio
URL = "https://mcp.example.com/mcp"


async def test_a_run_handed_out_late_is_not_lost_at_its_own_claim(history: SqlHistory, secrets: WebhookSecrets) -> None:
    store = MonitorStore(history.engine)  # lost after 3600 s
    made, token = await make_monitor(store, secrets, URL, runs=10, interval_s=300)
    now = T0 + timedelta(hours=5)  # the scheduler was down for 5 h: the run due at T0 is handed out now
    [claimed] = await store.claim(now, 10)
    [run] = await store.runs(made.key)
    assert run.status is None, (run.status, run.reason)  # handed out a moment ago: it may still report
    finished = await store.finish(
        claimed.run_id,
        status="ok",
        reason="ok",
        now=now + timedelta(seconds=5),
        decide=lambda _m, watch: Assessed(watch),
        body_of=lambda *_: b"{}",
    )
    assert finished is not None  # its outcome is heard (alerts decided), not dropped
    after = await store.get(made.monitor_id, token)
    assert after is not None and after.runs_left == 9  # charged once, not free


async def test_a_failing_give_back_does_not_lose_the_claimed_batch(
    history: SqlHistory, secrets: WebhookSecrets, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = MonitorStore(history.engine)
    made, _token = await make_monitor(store, secrets, URL, runs=3, interval_s=300)

    async def busy(*_a: object) -> None:  # (SQLite "database is locked", a PostgreSQL deadlock, ...)
        raise RuntimeError("give-back failed")

    monkeypatch.setattr(store, "_give_back_lost", busy)
    try:
        claimed = await store.claim(T0, 10)
    except RuntimeError:
        claimed = []
    # the run was committed as handed out (and charged): the caller must get it, or it is never enqueued
    [run] = await store.runs(made.key)
    assert [c.run_id for c in claimed] == [run.run_id]


async def test_a_block_given_back_after_its_exhausted_alert_alerts_again(
    history: SqlHistory, secrets: WebhookSecrets
) -> None:
    store = MonitorStore(history.engine)
    made, token = await make_monitor(store, secrets, URL, runs=2, interval_s=300)
    keep: dict[str, Any] = {"decide": lambda _m, watch: Assessed(watch), "body_of": lambda *_: b"{}"}
    [_lost] = await store.claim(T0, 10)  # never reports
    [last] = await store.claim(T0 + timedelta(seconds=300), 10)
    done = await store.finish(last.run_id, status="ok", reason="ok", now=T0 + timedelta(seconds=310), **keep)
    assert done is not None and len(done.deliveries) == 1  # monitor.exhausted
    await store.claim(T0 + timedelta(seconds=3700), 10)  # the lost run is given back: active, 1 left
    again = await store.get(made.monitor_id, token)
    assert again is not None and (again.state, again.runs_left) == ("active", 1)
    [extra] = await store.claim(T0 + timedelta(seconds=3800), 10)
    done = await store.finish(extra.run_id, status="ok", reason="ok", now=T0 + timedelta(seconds=3810), **keep)
    assert done is not None and len(done.deliveries) == 1  # exhausted again: told again


async def test_a_late_job_for_a_run_given_back_may_not_start(history: SqlHistory, secrets: WebhookSecrets) -> None:
    """Regression: a run given back as lost (refunded) was still probed when its job ran late
    (4 probes against a block of 2). Its job may not start now, and the refund stands."""
    store = MonitorStore(history.engine)
    made, token = await make_monitor(store, secrets, URL, runs=1, interval_s=300)
    [lost] = await store.claim(T0, 10)
    await store.claim(T0 + timedelta(seconds=store.lost_after_s + 1), 10)  # given back
    assert not await store.start(lost.run_id, T0 + timedelta(seconds=store.lost_after_s + 2))
    after = await store.get(made.monitor_id, token)
    assert after is not None and after.runs_left == 1


async def test_a_started_run_is_charged_even_when_never_heard_of(history: SqlHistory, secrets: WebhookSecrets) -> None:
    """A run whose job began contacting its target may have probed it: not refunded when lost."""
    store = MonitorStore(history.engine)
    made, token = await make_monitor(store, secrets, URL, runs=1, interval_s=300)
    [run] = await store.claim(T0, 10)
    assert await store.start(run.run_id, T0 + timedelta(seconds=1))
    assert await store.start(run.run_id, T0 + timedelta(seconds=2))  # (its job delivered again: may go on)
    await store.claim(T0 + timedelta(seconds=store.lost_after_s + 10), 10)
    [seen] = await store.runs(made.key)
    assert (seen.status, seen.reason) == ("lost", "never_reported")
    after = await store.get(made.monitor_id, token)
    assert after is not None and (after.runs_left, after.state) == (0, "exhausted")  # charged, once
    assert not await store.start(run.run_id, T0 + timedelta(hours=2))


async def test_deleting_a_monitor_cancels_its_runs_not_started(history: SqlHistory, secrets: WebhookSecrets) -> None:
    store = MonitorStore(history.engine)
    made, token = await make_monitor(store, secrets, URL, runs=5, interval_s=60)
    [running] = await store.claim(T0, 10)
    [queued] = await store.claim(T0 + timedelta(seconds=61), 10)
    assert await store.start(running.run_id, T0 + timedelta(seconds=62))
    await store.delete(made.monitor_id, token, T0 + timedelta(seconds=63))
    assert not await store.start(queued.run_id, T0 + timedelta(seconds=64))  # cancelled: contacts nothing
    assert not await store.start(running.run_id, T0 + timedelta(seconds=64))  # (a redelivery of it neither)
    runs = {r.run_id: (r.status, r.reason) for r in await store.runs(made.key)}
    assert runs == {queued.run_id: ("skipped", "monitor_deleted"), running.run_id: (None, None)}
