"""The monitor store on SQLite and PostgreSQL: tokens kept hashed and checked in constant time,
one monitor per payment, due runs claimed once and counted against the block, deletion."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from sqlalchemy import select

from app.db.tables.monitors import monitor_runs, monitors
from app.history.store import SqlHistory
from app.monitors.alerts import Assessed
from app.monitors.store import MonitorStore, PaymentSpent
from app.webhooks.secrets import WebhookSecrets
from tests.monitors.conftest import T0, later, make_monitor

pytestmark = pytest.mark.anyio
URL = "https://mcp.example.com/mcp"


async def test_a_token_is_stored_hashed_and_a_wrong_one_is_an_unknown_monitor(
    history: SqlHistory, secrets: WebhookSecrets
) -> None:
    store = MonitorStore(history.engine)
    made, token = await make_monitor(store, secrets, URL)
    assert (made.state, made.runs_left, made.runs_bought, made.next_due_at) == ("active", 3, 3, T0)
    assert await store.get(made.monitor_id, token) == made
    assert await store.get(made.monitor_id, token + "x") is None
    assert await store.get("mon_" + "0" * 24, token) is None
    async with history.engine.connect() as db:
        row = (await db.execute(select(monitors))).one()
    assert token not in repr(tuple(row)) and len(row.token_sha256) == 64


async def test_one_payment_makes_one_monitor(history: SqlHistory, secrets: WebhookSecrets) -> None:
    store = MonitorStore(history.engine)
    await make_monitor(store, secrets, URL, payment="p" * 64)
    with pytest.raises(PaymentSpent):
        await make_monitor(store, secrets, URL, payment="p" * 64)
    both = await asyncio.gather(
        make_monitor(store, secrets, URL, payment="q" * 64),
        make_monitor(store, secrets, URL, payment="q" * 64),
        return_exceptions=True,
    )
    assert sorted(type(item).__name__ for item in both) == ["PaymentSpent", "tuple"]
    async with history.engine.connect() as db:
        assert len((await db.execute(select(monitors.c.id))).all()) == 2


async def test_a_monitor_whose_payment_does_not_settle_is_not_written(
    history: SqlHistory, secrets: WebhookSecrets
) -> None:
    store = MonitorStore(history.engine)

    async def refuse(_made: object) -> None:
        raise RuntimeError("settlement failed")

    with pytest.raises(RuntimeError):
        await store.create(
            monitor_id="mon_" + "1" * 24, url=URL, interval_s=300, webhook_url="http://127.0.0.1:9/h",
            token_sha256="0" * 64, secret_keyid="k", payment="r" * 64, runs=5, now=T0, confirm=refuse,
        )  # fmt: skip
    async with history.engine.connect() as db:
        assert (await db.execute(select(monitors.c.id))).all() == []


async def test_due_runs_are_claimed_once_and_counted(history: SqlHistory, secrets: WebhookSecrets) -> None:
    store = MonitorStore(history.engine, lost_after_s=7 * 86_400)  # (no outcome is heard here: none is lost yet)
    made, _ = await make_monitor(store, secrets, URL, runs=2, interval_s=600)
    other, _ = await make_monitor(store, secrets, URL, runs=5, now=later(1))
    first = await store.claim(T0, 10)
    assert [(c.monitor_id, c.due_at, c.last) for c in first] == [(made.monitor_id, T0, False)]
    assert await store.claim(T0, 10) == []  # handed out once
    both = await store.claim(later(10), 10)
    assert [c.monitor_id for c in both] == [other.monitor_id, made.monitor_id]
    assert [c.last for c in both] == [False, True]  # the block's second and last run
    third = await store.claim(later(600), 10)
    assert [c.monitor_id for c in third] == [other.monitor_id]  # the exhausted one is not due again
    async with history.engine.connect() as db:
        row = (await db.execute(select(monitors).where(monitors.c.id == made.key))).one()
        run_ids = (await db.execute(select(monitor_runs.c.run_id))).scalars().all()
    assert (row.state, row.runs_left) == ("exhausted", 0)
    assert len(set(run_ids)) == len(run_ids) and all(len(r) == 64 for r in run_ids)


async def test_a_monitor_that_fell_behind_is_due_from_now_on(history: SqlHistory, secrets: WebhookSecrets) -> None:
    store = MonitorStore(history.engine)
    made, token = await make_monitor(store, secrets, URL, runs=10, interval_s=300)
    [claimed] = await store.claim(T0 + timedelta(hours=5), 10)
    assert claimed.due_at == T0
    current = await store.get(made.monitor_id, token)
    assert current is not None and current.next_due_at == T0 + timedelta(hours=5, seconds=300)


async def test_concurrent_claims_hand_each_run_out_once(history: SqlHistory, secrets: WebhookSecrets) -> None:
    store = MonitorStore(history.engine)
    for _ in range(6):
        await make_monitor(store, secrets, URL, runs=1)
    claims = await asyncio.gather(*(store.claim(later(1), 4) for _ in range(3)), return_exceptions=True)
    handed = [c.run_id for batch in claims if isinstance(batch, list) for c in batch]
    assert len(handed) == len(set(handed))
    rest = await store.claim(later(2), 10)
    assert len(handed) + len(rest) == 6


async def test_a_deleted_monitor_is_never_due(history: SqlHistory, secrets: WebhookSecrets) -> None:
    store = MonitorStore(history.engine)
    made, token = await make_monitor(store, secrets, URL)
    assert await store.delete(made.monitor_id, "wrong", later(1)) is None
    deleted = await store.delete(made.monitor_id, token, later(1))
    assert deleted is not None and (deleted.state, deleted.deleted_at) == ("deleted", later(1))
    assert await store.claim(later(5), 10) == []


async def test_a_skipped_run_is_not_charged(history: SqlHistory, secrets: WebhookSecrets) -> None:
    """A run that contacted nothing (the opt-out list said no, or could not be read) gives its run back."""
    from app.monitors.alerts import Assessed, Watch

    store = MonitorStore(history.engine)
    made, token = await make_monitor(store, secrets, URL, runs=1)
    [run] = await store.claim(T0, 10)
    assert run.last and (await store.get(made.monitor_id, token)).state == "exhausted"  # type: ignore[union-attr]

    def decide(_monitor: object, watch: Watch) -> Assessed:
        return Assessed(watch)

    finished = await store.finish(run.run_id, status="skipped", reason="optout_unavailable", now=T0,
                                  decide=decide, body_of=lambda *_: b"{}")  # fmt: skip
    after = await store.get(made.monitor_id, token)
    assert after is not None and (after.runs_left, after.state) == (1, "active")
    assert finished is not None and finished.deliveries == []  # (not exhausted: no monitor.exhausted alert)
    again = await store.finish(run.run_id, status="skipped", reason="optout_unavailable", now=T0,
                               decide=decide, body_of=lambda *_: b"{}")  # fmt: skip
    assert again is None and (await store.get(made.monitor_id, token)).runs_left == 1  # type: ignore[union-attr]


async def test_a_run_whose_job_never_reports_is_given_back(history: SqlHistory, secrets: WebhookSecrets) -> None:
    store = MonitorStore(history.engine)
    made, token = await make_monitor(store, secrets, URL, runs=1, interval_s=300)
    [lost] = await store.claim(T0, 10)  # (handed out; its job is then lost: no outcome is ever heard)
    assert (await store.get(made.monitor_id, token)).state == "exhausted"  # type: ignore[union-attr]
    await store.claim(T0 + timedelta(seconds=store.lost_after_s - 1), 10)  # (not yet: it may still report)
    [run] = await store.runs(made.key)
    assert run.status is None and (await store.get(made.monitor_id, token)).runs_left == 0  # type: ignore[union-attr]
    await store.claim(T0 + timedelta(seconds=store.lost_after_s + 1), 10)  # past any job's life
    after = await store.get(made.monitor_id, token)
    [run] = await store.runs(made.key)
    assert (run.run_id, run.status, run.reason) == (lost.run_id, "lost", "never_reported")
    assert after is not None and (after.runs_left, after.state) == (1, "active")  # given back
    late = await store.finish(lost.run_id, status="ok", reason="ok", now=T0 + timedelta(hours=2),
                              decide=lambda _m, watch: Assessed(watch), body_of=lambda *_: b"{}")  # fmt: skip
    assert late is None  # (an outcome heard after that changes nothing: the run was free)
    assert (await store.get(made.monitor_id, token)).runs_left == 1  # type: ignore[union-attr]
    [again] = await store.claim(T0 + timedelta(days=1), 10)  # and the run is handed out again
    assert again.run_id != lost.run_id and again.last


async def test_a_deleted_monitors_lost_run_is_not_given_back(history: SqlHistory, secrets: WebhookSecrets) -> None:
    store = MonitorStore(history.engine)
    made, token = await make_monitor(store, secrets, URL, runs=2, interval_s=300)
    await store.claim(T0, 10)
    await store.delete(made.monitor_id, token, T0 + timedelta(seconds=1))
    await store.claim(T0 + timedelta(days=1), 10)
    after = await store.get(made.monitor_id, token)
    assert after is not None and (after.state, after.runs_left) == ("deleted", 1)
    assert [(r.status, r.reason) for r in await store.runs(made.key)] == [("skipped", "monitor_deleted")]  # cancelled
