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


def _through(link_port: int) -> str:
    """The shared test Redis URL, dialled through a relay on ``link_port``."""
    url = shared_redis_url()
    database = url.rsplit("/", 1)[1] if url.count("/") >= 3 else "0"
    return f"redis://127.0.0.1:{link_port}/{database}"


async def test_jobs_handed_out_while_redis_is_away_go_on_the_queue_once_when_it_answers() -> None:
    """Regression: jobs a tick handed out while Redis was away (the marker and the queue both on
    it) were lost or skipped as enqueued already; they are held and go on the queue once."""
    from redis.asyncio import Redis

    from app.queue.broker import stream_broker
    from app.queue.dispatch import kick
    from app.store.redis import RedisStore
    from app.store.shared import SharedStore
    from tests.servers.tcp_relay import relay

    real = shared_redis_url()
    host_port = real.split("//", 1)[1].split("/", 1)[0]
    with relay(("127.0.0.1", int(host_port.rpartition(":")[2] or 6379))) as link:
        link.open = True
        settings = Settings(redis_url=_through(link.port), redis_namespace=f"t{uuid.uuid4().hex[:8]}:",
                            jobs_queue=uuid.uuid4().hex)  # fmt: skip
        assert settings.redis_url is not None
        store = SharedStore(RedisStore(settings.redis_url, 1.0, settings.redis_namespace))
        broker = stream_broker(settings)
        jobs = [probe_job(f"https://example.com/mcp{n}") for n in range(3)]
        registry = Registry()
        registry.add_source(ListSource(jobs=list(jobs)))

        async def enqueue(job: Job) -> None:
            await kick(broker, job)

        async def room() -> int:
            return 1000

        from prometheus_client import CollectorRegistry

        scheduler = Scheduler(registry, settings, store, enqueue, room, JobMetrics(CollectorRegistry()))
        try:
            link.cut()  # Redis away: the marker and the queue both fail
            assert await scheduler.tick() == 0 and [job.id for job in scheduler.held] == [job.id for job in jobs]
            link.open = True
            for _ in range(600):  # (the store says Redis is up again within about a second)
                if not store.degraded:
                    break
                await asyncio.sleep(0.05)
            assert await scheduler.tick() == 3 and scheduler.held == []
            assert await scheduler.tick() == 0
        finally:
            await broker.shutdown()
            await store.aclose()
    async with Redis.from_url(real) as redis:
        entries = await redis.xrange(settings.jobs_queue)
        await redis.delete(settings.jobs_queue)
    assert entries is not None and len(entries) == 3


async def test_a_job_put_back_while_redis_restarts_reaches_the_queue_when_it_answers() -> None:
    """Regression: a job its handler put back (the host was busy) failed with SendTaskError while
    Redis restarted, and was acknowledged and lost. It waits for the queue instead."""
    from redis.asyncio import Redis

    from app.queue.broker import stream_broker
    from app.queue.dispatch import kick_patiently
    from tests.servers.tcp_relay import relay

    real = shared_redis_url()
    host_port = real.split("//", 1)[1].split("/", 1)[0]
    with relay(("127.0.0.1", int(host_port.rpartition(":")[2] or 6379))) as link:
        settings = Settings(redis_url=_through(link.port), jobs_queue=uuid.uuid4().hex)
        broker = stream_broker(settings)
        job = probe_job("https://example.com/mcp")
        try:
            waiting = asyncio.create_task(kick_patiently(broker, job))
            await asyncio.sleep(1.0)  # (several tries refused)
            assert not waiting.done()
            link.open = True
            await asyncio.wait_for(waiting, 60)
        finally:
            await broker.shutdown()
    async with Redis.from_url(real) as redis:
        entries = await redis.xrange(settings.jobs_queue)
        await redis.delete(settings.jobs_queue)
    assert entries is not None and len(entries) == 1
