"""Retention on SQLite and PostgreSQL: pruning in batches deletes what one statement did and keeps
what changes, baselines and latest states point to; the pruning job prunes on its timer, and a
database that is down, or a prune that hangs, is logged and tried again, never the job's end."""

from __future__ import annotations

import asyncio
import logging
import socket
from datetime import datetime, timedelta

import pytest

from app.baselines.store import Baselines
from app.db.tables.history import runs, server_days, toolsets
from app.history.retention import Pruner
from app.history.store import SqlHistory
from tests.history.test_changes import SERVER, STRICT, WIDER
from tests.history.test_store import T0, count, run

pytestmark = pytest.mark.anyio


async def test_pruning_in_batches_deletes_every_old_run_and_keeps_what_is_pointed_to(history: SqlHistory) -> None:
    lists = (None, WIDER, STRICT)
    for n in range(23):
        await history.record(run(n, tools=lists[n % 3] if n % 3 else run().tools))
    await Baselines(history.engine).approve(SERVER, run(1).run_id, "host_proof")  # WIDER, read by runs that all go
    cutoff = T0 + timedelta(hours=17, minutes=30)
    assert await history.prunable(cutoff) == 18
    assert await history.prune(cutoff, batch=4) == 18  # 4 + 4 + 4 + 4 + 2
    assert await count(history, runs) == 5 and await history.prunable(cutoff) == 0
    kept = await history.changes(SERVER)
    assert [c.run_id for c in kept] == [run(n).run_id for n in range(22, 17, -1)]  # the others went with their runs
    baseline = await Baselines(history.engine).baseline(SERVER)
    assert baseline is not None and baseline.toolset.definitions == WIDER
    assert await count(history, toolsets) == 3  # each list: a kept run, a change or the baseline points to it
    assert await history.prune(cutoff, batch=4) == 0  # again: nothing more


async def test_a_batch_as_large_as_the_backlog_and_old_days(history: SqlHistory) -> None:
    for n in range(0, 24 * 5, 12):  # two runs a day, from 12:00 on 1 November to 00:00 on 6 November
        await history.record(run(n))
    assert await count(history, server_days) == 6
    assert await history.prune(T0 + timedelta(days=3), batch=6) == 6  # exactly one full batch, then an empty one
    assert await count(history, runs) == 4
    assert await count(history, server_days) == 4  # the days before the day before the cut went


async def test_the_job_prunes_at_its_start_and_then_on_its_timer(history: SqlHistory) -> None:
    for n in range(6):
        await history.record(run(n))
    now = [T0 + timedelta(days=1, hours=2, minutes=30)]  # runs 0 to 2 are past a retention of one day
    job = Pruner(history, 1, delay_s=0, interval_s=0.05, clock=lambda: now[0])
    job.start()
    try:
        await _until(lambda: job.outcomes["done"] >= 1)
        assert job.pruned == 3 and await count(history, runs) == 3
        now[0] += timedelta(hours=2)
        await _until(lambda: job.pruned == 5)
        assert await count(history, runs) == 1
    finally:
        await job.aclose()


async def test_the_job_survives_a_database_that_is_down(caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    down = SqlHistory.open(f"postgresql+asyncpg://postgres@127.0.0.1:{port}/none")
    job = Pruner(down, 90, delay_s=0, interval_s=0.05)
    caplog.set_level(logging.WARNING, "mcp_sonde.history")
    job.start()
    try:
        await _until(lambda: job.outcomes["failed"] >= 2)  # tried again at the next turn
        assert job._task is not None and not job._task.done()
        assert "the history could not be pruned" in caplog.text
    finally:
        await job.aclose()
        await down.aclose()
    assert job._task is None


class Hangs:
    """A store whose prune never ends."""

    def __init__(self) -> None:
        self.calls = 0

    async def prune(self, before: datetime) -> int:
        self.calls += 1
        await asyncio.sleep(3600)
        return 0


async def test_a_prune_that_hangs_is_cut_off_and_the_next_turn_comes() -> None:
    store = Hangs()
    job = Pruner(store, 90, delay_s=0, interval_s=0.01, timeout_s=0.05)
    job.start()
    try:
        await _until(lambda: job.outcomes["timeout"] >= 2)
        assert store.calls >= 2
    finally:
        await job.aclose()


async def _until(condition: object, within_s: float = 10.0) -> None:
    assert callable(condition)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while not condition():
        assert loop.time() < deadline, "the condition did not come true in time"
        await asyncio.sleep(0.02)
