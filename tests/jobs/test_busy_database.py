"""A job meets a busy or blinking database: it waits, never fails or loses its run
(regression: under a sweep's load every pooled connection was busy; the pool's timeout counted
the run lost, skipped jobs as opt-out unknown and failed the source's bookkeeping)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack

import pytest
from sqlalchemy.exc import TimeoutError as PoolTimeout

from app.checking.recorder import transient
from app.queue.model import Outcome
from tests.jobs.conftest import ListSource, job_settings, postgres_database, probe_job, stored_runs
from tests.jobs.test_probe import in_memory
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp

pytestmark = pytest.mark.anyio


class BlinkingSource(ListSource):
    """A source whose bookkeeping meets a busy pool the first time."""

    failed = 0

    async def finished(self, outcome: Outcome) -> None:
        if not self.failed:
            self.failed += 1
            raise PoolTimeout("QueuePool limit reached, connection timed out")
        await super().finished(outcome)


def test_a_pool_timeout_is_a_database_that_does_not_answer() -> None:
    assert transient(PoolTimeout("QueuePool limit reached"))


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A PostgreSQL database of the test's own (SQLite's file has no pool to exhaust)."""
    with postgres_database() as url:
        yield url


async def test_a_job_waits_for_a_busy_pool_and_its_source_is_told_once(raw: RawServer, postgres_url: str) -> None:
    raw.routes["/mcp"] = MiniMcp()
    url = postgres_url
    settings = job_settings(url, database_pool_size=1, job_history_wait_s=30.0)
    source = BlinkingSource()
    job = probe_job(raw.url("/mcp"))
    async with in_memory(settings, source) as (ctx, run):
        engine = ctx.services.optouts.engine
        async with AsyncExitStack() as held:
            for _ in range(2):  # the pool's one connection and the one it may lend: both busy
                await held.enter_async_context(engine.connect())
            running = asyncio.ensure_future(run(job))
            await asyncio.sleep(7)  # longer than the pool's 5 s wait
            assert not running.done()
        await asyncio.wait_for(running, 60)
    [outcome] = source.outcomes
    assert (outcome.status, outcome.reason, outcome.stored, source.failed) == ("ok", "ok", True, 1)
    assert await stored_runs(url, job.id) == 1


class Deadlocked(Exception):
    sqlstate = "40P01"


def test_a_deadlock_is_a_write_to_try_again_not_a_run_lost() -> None:
    """Regression: two workers' runs deadlocked on PostgreSQL and one run was counted lost."""
    from sqlalchemy.exc import DBAPIError

    assert transient(DBAPIError("INSERT ...", {}, Deadlocked("deadlock detected")))
    assert not transient(DBAPIError("INSERT ...", {}, ValueError("invalid input")))


class DownSource(ListSource):
    """A source whose database refuses connections for its first ``down_s`` seconds."""

    down_s = 3.0
    refused = 0
    up_at: float | None = None

    async def finished(self, outcome: Outcome) -> None:
        if self.up_at is None:  # (down from the first report on)
            self.up_at = time.monotonic() + self.down_s
        if time.monotonic() < self.up_at:
            self.refused += 1
            raise ConnectionRefusedError(111, "Connection refused")
        await super().finished(outcome)


async def test_regression_an_outcome_met_by_a_database_down_longer_than_a_run_waits_is_reported_not_dropped(
    raw: RawServer, postgres_url: str
) -> None:
    """The cluster drill's PostgreSQL stop: the run waited its job_history_wait_s and went to the
    queue, then the report of the outcome gave up as soon and the job failed, so the monitor run
    it had performed ended lost (charged, never reported). The report waits far longer."""
    raw.routes["/mcp"] = MiniMcp()
    settings = job_settings(postgres_url, job_history_wait_s=0.5)
    source = DownSource()
    async with in_memory(settings, source) as (_ctx, run):
        await asyncio.wait_for(run(probe_job(raw.url("/mcp"))), 60)
    assert source.refused >= 2  # (refused for longer than job_history_wait_s)
    [outcome] = source.outcomes
    assert (outcome.status, outcome.reason) == ("ok", "ok")
