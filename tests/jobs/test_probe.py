"""The probe handler on both brokers: a job's check is signed and stored once, as a served one."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest
from redis.asyncio import Redis

from app.attest.verify.keydoc import parse_keys
from app.attest.verify.verifier import verify
from app.checking.services import build_services, open_history
from app.checking.turns import TURN_WAIT_S
from app.jobs.context import JobContext
from app.jobs.parts import context_for
from app.optout.known import KnownOptOuts
from app.queue.broker import memory_broker, stream_broker
from app.queue.dispatch import Dispatcher, bind, done_key, kick
from app.queue.model import Job
from app.queue.worker import work
from app.settings import Settings
from app.store import key
from tests.jobs.conftest import ListSource, job_settings, probe_job, stored_runs
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp
from tests.servers.redis_server import shared_redis_url

pytestmark = pytest.mark.anyio

Run = Callable[[Job], Awaitable[None]]


@asynccontextmanager
async def in_memory(settings: Settings, source: ListSource) -> AsyncIterator[tuple[JobContext, Run]]:
    """The embedded path: taskiq's in-memory broker and the dispatcher's task."""
    services = build_services(settings)
    ctx = context_for(services, parts=())
    ctx.registry.add_source(source)
    broker = memory_broker()
    bind(broker, Dispatcher(ctx.registry, ctx, settings.worker_concurrency))
    await broker.startup()

    async def run(job: Job) -> None:
        await kick(broker, job)
        await broker.wait_all()

    ctx.enqueue = run
    try:
        yield ctx, run
    finally:
        await broker.shutdown()
        await services.aclose()


@asynccontextmanager
async def on_redis(settings: Settings, source: ListSource) -> AsyncIterator[tuple[JobContext, Run]]:
    """A worker reading the Redis stream (a queue of this test's own on db 15)."""
    settings = settings.model_copy(update={"redis_url": shared_redis_url()})
    services = build_services(settings)
    ctx = context_for(services, parts=())
    ctx.registry.add_source(source)
    stop = asyncio.Event()
    worker = asyncio.create_task(work(ctx, stream_broker(settings), 4, stop))
    producer = stream_broker(settings)

    async def run(job: Job) -> None:
        heard = len(source.outcomes)
        done = ctx.job_metrics.counts.get("done", 0) + ctx.job_metrics.counts.get("already_done", 0)
        await kick(producer, job)
        deadline = time.monotonic() + 30
        while len(source.outcomes) == heard and (
            ctx.job_metrics.counts.get("done", 0) + ctx.job_metrics.counts.get("already_done", 0) == done
        ):
            assert time.monotonic() < deadline, "the worker did not run the job"
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.1)

    try:
        yield ctx, run
    finally:
        stop.set()
        await asyncio.wait_for(worker, 30)
        await producer.shutdown()
        client = Redis.from_url(shared_redis_url())
        await client.delete(settings.jobs_queue)
        await client.aclose()
        await services.aclose()


BROKERS = {"memory": in_memory, "redis": on_redis}


@pytest.fixture(params=sorted(BROKERS))
def broker(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_a_probe_job_stores_one_signed_run_under_its_id(broker: str, database_url: str, raw: RawServer) -> None:
    raw.routes["/mcp"] = MiniMcp()
    settings = job_settings(database_url)
    source = ListSource()
    job = probe_job(raw.url("/mcp"))
    async with BROKERS[broker](settings, source) as (_ctx, run):
        await run(job)
    [outcome] = source.outcomes
    assert (outcome.job, outcome.status, outcome.reason, outcome.stored) == (job, "ok", "ok", True)
    assert outcome.result is not None and outcome.result.attestation_id is not None
    assert await stored_runs(database_url, job.id) == 1 and await stored_runs(database_url) == 1
    history = open_history(database_url)
    try:
        envelope = await history.envelope(outcome.result.attestation_id)
    finally:
        await history.aclose()
    assert envelope is not None
    verified = verify(envelope, parse_keys(settings.keys_path.read_bytes()))  # a real Ed25519 signature
    assert verified.keys and verified.predicate["result_sha256"]
    assert any(r.message.get("method") == "initialize" for r in raw.requests_to("/mcp"))


async def test_a_redelivered_job_is_stored_once(broker: str, database_url: str, raw: RawServer) -> None:
    raw.routes["/mcp"] = MiniMcp()
    settings = job_settings(database_url)
    source = ListSource()
    job = probe_job(raw.url("/mcp"))
    async with BROKERS[broker](settings, source) as (ctx, run):
        await run(job)
        probes = len([r for r in raw.requests_to("/mcp") if r.message.get("method") == "initialize"])
        await run(job)  # delivered again after it finished: not run again
        assert len([r for r in raw.requests_to("/mcp") if r.message.get("method") == "initialize"]) == probes
        assert ctx.job_metrics.counts["already_done"] == 1
        await ctx.store.delete_if_equal(done_key(job.id), b"1")  # a delivery that raced the first one's marker
        await run(job)
    assert [o.stored for o in source.outcomes] == [True, True]  # (the second found its run stored)
    assert await stored_runs(database_url) == 1
    samples = ctx.metrics.registry.get_sample_value
    assert samples("mcp_sonde_history_runs_total", {"outcome": "duplicate"}) == 1


async def test_a_refused_url_contacts_nothing(broker: str, database_url: str, raw: RawServer) -> None:
    raw.routes["/mcp"] = MiniMcp()
    settings = job_settings(database_url, allow_private=False)
    source = ListSource()
    job = probe_job(raw.url("/mcp"))
    async with BROKERS[broker](settings, source) as (_ctx, run):
        await run(job)
    [outcome] = source.outcomes
    assert (outcome.status, outcome.stored, outcome.result) == ("refused", False, None)
    assert outcome.reason == "scheme_not_https"  # (the guard's first refusal of http://127.0.0.1:port)
    assert raw.seen == [] and raw.connections == 0
    assert await stored_runs(database_url) == 0


async def test_a_job_never_fetches_metadata_from_an_opted_out_host(database_url: str, raw: RawServer) -> None:
    from tests.servers.raw import send

    hint = raw.url("/meta", host="localhost")  # (another host name, the same loopback server)

    def protected(_request: object, conn: object) -> None:
        challenge = f'Bearer resource_metadata="{hint}"'
        send(conn, 401, {"www-authenticate": challenge, "content-type": "application/json"}, b"{}")  # type: ignore[arg-type]

    raw.routes["/mcp"] = protected
    settings = job_settings(database_url)
    source = ListSource()
    async with in_memory(settings, source) as (ctx, run):
        await run(probe_job(raw.url("/mcp")))
        assert len(raw.requests_to("/meta")) == 1  # (without an opt-out, the hint is fetched)
        await ctx.services.optouts.add("localhost")
        ctx.optouts = KnownOptOuts(ctx.services.optouts)  # (as a worker reads it within seconds)
        await run(probe_job(raw.url("/mcp")))
    assert [o.status for o in source.outcomes] == ["auth", "auth"]
    assert len(raw.requests_to("/meta")) == 1, "the opted-out host was contacted by the second job"
    second = source.outcomes[1].result
    assert second is not None and second.auth is not None
    first = second.auth.lookups[0]
    assert (first.url, first.refused) == (hint, "opted_out")


async def test_a_further_host_named_in_a_challenge_waits_for_its_start_turn(database_url: str, raw: RawServer) -> None:
    from tests.servers.raw import send

    hint = raw.url("/meta", host="localhost")

    def protected(_request: object, conn: object) -> None:
        challenge = f'Bearer resource_metadata="{hint}"'
        send(conn, 401, {"www-authenticate": challenge, "content-type": "application/json"}, b"{}")  # type: ignore[arg-type]

    raw.routes["/mcp"] = protected
    settings = job_settings(database_url, host_start_interval_s=60.0)
    source = ListSource()
    async with in_memory(settings, source) as (ctx, run):
        await ctx.store.set_nx(key("host-start", "localhost", "free"), b"1", 60)  # (another probe just started there)
        started = time.monotonic()
        await run(probe_job(raw.url("/mcp")))
        waited = time.monotonic() - started
    [outcome] = source.outcomes
    assert outcome.status == "auth" and outcome.result is not None and outcome.result.auth is not None
    assert outcome.result.auth.lookups[0].refused == "target_busy"
    assert raw.requests_to("/meta") == [], "the further host was contacted outside its turn"
    assert waited >= TURN_WAIT_S  # (it waited for the turn, bounded)


class Withdrawing(ListSource):
    """A gated source (:class:`app.queue.model.Gated`) that withdrew every job it handed out."""

    def __init__(self) -> None:
        super().__init__(name="withdrawing")
        self.asked_begin: list[str] = []

    async def begin(self, job: Job) -> bool:
        self.asked_begin.append(job.id)
        return False


async def test_a_job_its_source_withdrew_contacts_nothing(broker: str, database_url: str, raw: RawServer) -> None:
    """Regression: a monitor run given back as lost (refunded) was still probed when its job ran
    late; the job asks its source first and contacts nothing once withdrawn."""
    raw.routes["/mcp"] = MiniMcp()
    source = Withdrawing()
    job = probe_job(raw.url("/mcp"), source=source.name)
    async with BROKERS[broker](job_settings(database_url), source) as (_ctx, run):
        await run(job)
    assert source.asked_begin == [job.id] and source.outcomes == []
    assert raw.seen == [] and raw.connections == 0
    assert await stored_runs(database_url) == 0
