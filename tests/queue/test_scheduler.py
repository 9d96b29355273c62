"""The scheduler: one active at a time through its lease in Redis, a standby takes over, no job twice."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import Counter
from datetime import datetime

import pytest

from app.queue.handlers import Registry, RegistryError
from app.queue.lock import Lease
from app.queue.metrics import JobMetrics
from app.queue.model import Job
from app.queue.scheduler import Scheduler
from app.settings import Settings
from app.store import open_store
from tests.jobs.conftest import ListSource, probe_job
from tests.servers.redis_server import shared_redis_url

pytestmark = pytest.mark.anyio


class Endless(ListSource):
    """Hands out fresh jobs every tick, each id once (as a claiming source does); counts what it handed."""

    def __init__(self) -> None:
        super().__init__(name="endless")
        self.handed: list[str] = []

    async def due(self, now: datetime, limit: int) -> list[Job]:
        jobs = [probe_job("https://example.com/mcp", source=self.name) for _ in range(min(limit, 3))]
        self.handed += [job.id for job in jobs]
        return jobs


def scheduler_of(settings: Settings, source: ListSource, enqueued: list[tuple[str, str]], who: str) -> Scheduler:
    assert settings.redis_url is not None
    registry = Registry()
    registry.add_source(source)
    store = open_store(settings.redis_url, 1.0, settings.redis_namespace, 1024 * 1024)

    async def enqueue(job: Job) -> None:
        enqueued.append((who, job.id))

    async def room() -> int:
        return 1000

    from prometheus_client import CollectorRegistry

    lease = Lease(settings.redis_url, settings.jobs_queue, settings.scheduler_lock_ttl_s, settings.redis_namespace)
    return Scheduler(registry, settings, store, enqueue, room, JobMetrics(CollectorRegistry()), lease)


async def test_one_scheduler_is_active_and_a_standby_takes_over_when_it_dies(caplog: pytest.LogCaptureFixture) -> None:
    settings = Settings(
        redis_url=shared_redis_url(), redis_namespace=f"t{uuid.uuid4().hex[:8]}:", jobs_queue=uuid.uuid4().hex,
        scheduler_tick_s=0.2, scheduler_lock_ttl_s=3.0,
    )  # fmt: skip
    caplog.set_level(logging.INFO, logger="mcp_sonde.jobs")
    source = Endless()
    enqueued: list[tuple[str, str]] = []
    first, second = (scheduler_of(settings, source, enqueued, who) for who in ("first", "second"))
    stop_first, stop_second = asyncio.Event(), asyncio.Event()
    running_first = asyncio.create_task(first.run(stop_first))
    await asyncio.sleep(0.3)
    running_second = asyncio.create_task(second.run(stop_second))
    await asyncio.sleep(2.0)
    assert {who for who, _ in enqueued} == {"first"} and first.active and not second.active
    said = [r.getMessage() for r in caplog.records if r.name == "mcp_sonde.jobs"]
    assert "this scheduler is active" in said and "this scheduler is standing by (another one is active)" in said
    # The active one dies: its tasks end without giving the lease back.
    assert first.lease is not None
    first.lease.release = _nothing  # type: ignore[method-assign]
    died = time.monotonic()
    running_first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running_first
    first.lease.held_until = 0.0
    while not any(who == "second" for who, _ in enqueued):
        assert time.monotonic() - died < 30, "the standby did not take over"
        await asyncio.sleep(0.05)
    took_over = time.monotonic() - died
    stop_second.set()
    await running_second
    assert took_over < settings.scheduler_lock_ttl_s * 1.5  # (about a lifetime and a third: 30 s at most with 15 s)
    ids = Counter(job_id for _, job_id in enqueued)
    assert ids and max(ids.values()) == 1 and set(ids) <= set(source.handed)
    assert source.handed[: len(enqueued)] == [job_id for _, job_id in enqueued]  # nothing handed out was lost
    for scheduler in (first, second):
        assert scheduler.lease is not None
        await scheduler.lease.aclose()
        await scheduler.store.aclose()


async def _nothing() -> None:
    return None


async def test_a_job_id_handed_out_twice_is_enqueued_once_and_one_the_queue_refused_is_held() -> None:
    settings = Settings(redis_url=shared_redis_url(), redis_namespace=f"t{uuid.uuid4().hex[:8]}:",
                        jobs_queue=uuid.uuid4().hex)  # fmt: skip
    job = probe_job("https://example.com/mcp")
    source = ListSource(jobs=[job, job])
    enqueued: list[tuple[str, str]] = []
    scheduler = scheduler_of(settings, source, enqueued, "one")
    assert scheduler.lease is not None and await scheduler.lease.acquire()
    assert await scheduler.tick() == 1 and enqueued == [("one", job.id)]
    refusing = ListSource(name="other", jobs=[probe_job("https://example.org/mcp", source="other")])
    scheduler.registry.add_source(refusing)
    calls = 0

    async def down(job: Job) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise ConnectionError("the queue is away")
        enqueued.append(("one", job.id))

    scheduler._enqueue = down
    assert await scheduler.tick() == 0 and len(scheduler.held) == 1  # claimed by its source, kept for the queue
    assert await scheduler.tick() == 1 and scheduler.held == [] and len(enqueued) == 2
    await scheduler.lease.release()
    assert await scheduler.tick() == 0  # no lease, nothing enqueued
    await scheduler.lease.aclose()
    await scheduler.store.aclose()


def test_a_source_or_handler_is_registered_once() -> None:
    registry = Registry()
    registry.add_source(ListSource())
    with pytest.raises(RegistryError):
        registry.add_source(ListSource())
    registry.add_handler("probe", _handler)
    with pytest.raises(RegistryError):
        registry.add_handler("probe", _handler)


async def _handler(ctx: object, job: Job) -> None:
    return None
