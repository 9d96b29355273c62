"""The ``sweep`` source on both backends: claims, outcomes, back-off, opt-out."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.tables.registry import registry_endpoints
from app.history.records import utc
from app.optout import OptOutList
from app.queue.model import PROBE, Job, Outcome
from app.registry.importer import import_entries, refresh_swept
from app.registry.page import read_page
from app.sweeps.policy import SweepPolicy
from app.sweeps.source import SweepSource
from tests.servers.registry import RegistryState, generated

pytestmark = pytest.mark.anyio
DAY = timedelta(days=1)


async def mirror(engine: AsyncEngine, count: int) -> datetime:
    now = datetime.now(UTC)
    page = read_page(RegistryState(entries=generated(count)).page(None, 1000, None))
    await import_entries(engine, page.entries, now=now, allow_private=False, interval_s=86_400)
    assert await refresh_swept(engine) == count
    return now


async def endpoint(engine: AsyncEngine, key: str) -> object:
    async with engine.connect() as db:
        return (await db.execute(select(registry_endpoints).where(registry_endpoints.c.id == int(key)))).one()


async def test_every_endpoint_comes_due_within_a_day_once_and_not_again_for_6_hours(engine: AsyncEngine) -> None:
    now = await mirror(engine, 300)
    source = SweepSource(engine, SweepPolicy())
    async with engine.connect() as db:
        dues = [utc(d) for d in (await db.execute(select(registry_endpoints.c.next_due))).scalars()]
    assert 0 < sum(d <= now + timedelta(hours=2) for d in dues) < 60  # spread: about 2/24 of them
    jobs = await source.due(now + DAY, 1000)
    assert len(jobs) == 300 and len({j.ref for j in jobs}) == 300 and len({j.id for j in jobs}) == 300
    job = jobs[0]
    assert job.kind == PROBE and job.source == "sweep" and job.url.startswith("https://h") and len(job.id) == 32
    assert await source.due(now + DAY + timedelta(hours=5, minutes=59), 1000) == []  # held by the claims
    again = await source.due(now + DAY + timedelta(hours=6), 1000)  # (no outcome heard: handed out again)
    assert len(again) == 300 and not {j.id for j in again} & {j.id for j in jobs}


async def test_outcomes_set_the_next_due_time_once_per_job(engine: AsyncEngine) -> None:
    now = await mirror(engine, 3)
    source = SweepSource(engine, SweepPolicy(), clock=lambda: now + DAY)
    job = (await source.due(now + DAY, 1))[0]
    await source.finished(Outcome(job=job, status="ok", reason="ok", stored=True))
    row = await endpoint(engine, job.ref)
    assert row.last_status == "ok" and row.failures == 0 and row.finished_job == job.id  # type: ignore[attr-defined]
    due = utc(row.next_due)  # type: ignore[attr-defined]
    assert timedelta(hours=21) < due - (now + DAY) < timedelta(hours=27)
    await source.finished(Outcome(job=job, status="unreachable", reason="connect_refused", stored=True))  # (twice)
    assert (await endpoint(engine, job.ref)).last_status == "ok"  # type: ignore[attr-defined]
    stale = Job(kind=PROBE, id="f" * 32, source="sweep", ref=job.ref, url=job.url, due_at=job.due_at)
    await source.finished(Outcome(job=stale, status="unreachable", reason="connect_refused", stored=True))
    assert (await endpoint(engine, job.ref)).last_status == "ok"  # type: ignore[attr-defined]


async def test_an_endpoint_that_keeps_failing_is_probed_less_and_less_often(engine: AsyncEngine) -> None:
    now = await mirror(engine, 1)
    moment = now + DAY
    source = SweepSource(engine, SweepPolicy(), clock=lambda: moment)
    waits = []
    for _ in range(5):
        (job,) = await source.due(moment, 1)
        await source.finished(Outcome(job=job, status="unreachable", reason="connect_refused", stored=True))
        row = await endpoint(engine, job.ref)
        waits.append(round((utc(row.next_due) - moment) / DAY))  # type: ignore[attr-defined]
        moment = utc(row.next_due)  # type: ignore[attr-defined]
    assert waits == [1, 2, 4, 7, 7]
    assert (await endpoint(engine, job.ref)).failures == 5  # type: ignore[attr-defined]


async def test_an_opted_out_host_is_never_handed_out(engine: AsyncEngine) -> None:
    now = await mirror(engine, 100)
    await OptOutList(engine).add("fixture.example.com")  # (every h<n>.fixture.example.com)
    source = SweepSource(engine, SweepPolicy())
    assert await source.due(now + DAY, 1000) == []
    async with engine.connect() as db:
        reasons = set((await db.execute(select(registry_endpoints.c.last_reason))).scalars())
    assert reasons == {"opted_out"}


async def test_an_opted_out_url_only_stops_that_endpoint(engine: AsyncEngine) -> None:
    now = await mirror(engine, 20)
    await OptOutList(engine).add("https://h3.fixture.example.com/mcp/3?key=ignored")
    jobs = await SweepSource(engine, SweepPolicy()).due(now + DAY, 1000)
    assert len(jobs) == 19 and "https://h3.fixture.example.com/mcp/3" not in {j.url for j in jobs}


async def test_two_schedulers_claiming_at_once_hand_out_each_endpoint_once(engine: AsyncEngine) -> None:
    now = await mirror(engine, 200)
    one, two = SweepSource(engine, SweepPolicy()), SweepSource(engine, SweepPolicy())
    results = await asyncio.gather(*(s.due(now + DAY, 60) for s in (one, two, one, two)))
    refs = [job.ref for batch in results for job in batch]
    assert refs and len(refs) == len(set(refs))  # (a loser of a race hands out nothing, never a copy)
    rest = [job.ref for job in await one.due(now + DAY, 1000)]
    assert not set(rest) & set(refs) and len(refs) + len(rest) == 200


async def test_a_host_whose_owner_paused_sweeps_is_not_handed_out_until_resumed(engine: AsyncEngine) -> None:
    from sqlalchemy import insert

    from app.db.tables.owners import owner_hosts

    now = await mirror(engine, 20)
    source = SweepSource(engine, SweepPolicy())
    async with engine.connect() as db:
        urls = list((await db.execute(select(registry_endpoints.c.url))).scalars())
    host = urls[0].split("/")[2]
    async with engine.begin() as db:
        await db.execute(insert(owner_hosts).values(host=host, sweeps_paused=True, updated_at=now))
    jobs = await source.due(now + DAY, 1000)
    assert len(jobs) == 19 and host not in {j.url.split("/")[2] for j in jobs}
    async with engine.connect() as db:
        query = select(registry_endpoints.c.last_reason).where(registry_endpoints.c.url == urls[0])
        assert (await db.execute(query)).scalar() == "sweeps_paused"
    async with engine.begin() as db:
        await db.execute(owner_hosts.update().where(owner_hosts.c.host == host).values(sweeps_paused=False))
    later = await source.due(now + DAY + timedelta(hours=6), 1000)
    assert host in {j.url.split("/")[2] for j in later}  # resumed: due again within the least interval
