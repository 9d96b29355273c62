"""A job redelivered after its worker died takes over the single-flight lock and the host's slots
that its dead delivery left, instead of waiting for them to expire (:mod:`app.checking.runner`);
another job of the same URL still waits for them."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest

from app.checking.services import build_services
from app.jobs.context import JobContext
from app.jobs.parts import context_for
from app.jobs.probe import outcome_of
from app.queue.dispatch import Requeued
from app.queue.model import Job
from app.store import key
from tests.jobs.conftest import job_settings, probe_job
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp
from tests.servers.redis_server import shared_redis_url

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["memory", "redis"])
async def ctx(request: pytest.FixtureRequest, database_url: str) -> AsyncIterator[JobContext]:
    redis_url = shared_redis_url() if request.param == "redis" else None
    settings = job_settings(database_url, redis_url=redis_url, host_concurrency=1, host_client_concurrency=1,
                            job_turn_wait_s=2.0)  # fmt: skip
    services = build_services(settings)
    made = context_for(services, parts=())
    requeued: list[Job] = []

    async def enqueue(job: Job) -> None:
        requeued.append(job)

    made.enqueue = enqueue
    try:
        yield made
    finally:
        await services.aclose()


async def left_by_a_dead_delivery(ctx: JobContext, job: Job) -> None:
    """What a worker SIGKILLed mid-probe leaves in the store: the flight lock and both slots, a minute to live."""
    token = "job:" + job.id
    url = job.url
    assert await ctx.store.set_nx(key("flight", "full", "free", url) + ":lock", token.encode(), 60)
    assert await ctx.store.acquire_slot(key("host-client", "127.0.0.1", "free", token), token, 1, 60)
    assert await ctx.store.acquire_slot(key("host-slots", "127.0.0.1", "free"), token, 1, 60)


async def test_a_redelivered_job_takes_over_the_lock_and_slots_of_its_dead_delivery(
    ctx: JobContext, raw: RawServer
) -> None:
    raw.routes["/mcp"] = MiniMcp()
    job = probe_job(raw.url("/mcp"), job_id="redelivered-" + "a" * 20)
    await left_by_a_dead_delivery(ctx, job)
    started = time.monotonic()
    outcome = await outcome_of(ctx, job)
    took = time.monotonic() - started
    # (served, not refused after the 2 s turn wait, and long before the 60 s the dead delivery's
    # lock and slots live: a wide margin for a loaded machine, where the probe alone took 2.02 s)
    assert (outcome.status, outcome.stored) == ("ok", True) and took < 30.0, took
    assert await ctx.store.get(key("flight", "full", "free", job.url) + ":lock") is None  # (released after)


async def test_another_job_of_the_url_still_waits_for_a_dead_deliverys_lock(ctx: JobContext, raw: RawServer) -> None:
    raw.routes["/mcp"] = MiniMcp()
    dead = probe_job(raw.url("/mcp"), job_id="dead-" + "b" * 20)
    await left_by_a_dead_delivery(ctx, dead)
    with pytest.raises(Requeued):
        await outcome_of(ctx, probe_job(raw.url("/mcp"), job_id="other-" + "c" * 20))
    assert not raw.seen
