"""The ``registry`` source and the ``registry_sync`` handler, called as the engine calls them."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.tables.registry import registry_entries
from app.guard import SystemResolver
from app.queue.model import REGISTRY_SYNC, Job, Source
from app.registry.jobs import RegistryMirror, RegistrySyncSource, register
from app.settings import Settings
from app.sweeps.source import SweepSource
from tests.servers.registry import RegistryState, generated, registry_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def state() -> RegistryState:
    return RegistryState(entries=generated(250))


@pytest.fixture
def settings(state: RegistryState) -> Iterator[Settings]:
    with registry_server(state) as url:
        yield Settings(allow_private=True, registry_url=url, registry_page_limit=100)


class Engine:
    """What an engine's registry is to :func:`register`: sources and handlers by kind."""

    def __init__(self) -> None:
        self.sources: list[Source] = []
        self.handlers: dict[str, Any] = {}

    def add_source(self, source: Source) -> None:
        self.sources.append(source)

    def add_handler(self, kind: str, handler: Any) -> None:
        self.handlers[kind] = handler


async def test_the_sync_is_handed_out_once_an_interval_even_to_two_schedulers(
    engine: AsyncEngine, settings: Settings
) -> None:
    now = datetime.now(UTC)
    one, two = RegistrySyncSource(engine, settings), RegistrySyncSource(engine, settings)
    first = await asyncio.gather(one.due(now, 10), two.due(now, 10))
    jobs = first[0] + first[1]
    assert len(jobs) == 1 and jobs[0].kind == REGISTRY_SYNC and jobs[0].source == "registry"
    assert await one.due(now + timedelta(minutes=59), 10) == []
    again = await two.due(now + timedelta(seconds=3601), 10)
    assert len(again) == 1 and again[0].id != jobs[0].id


async def test_register_adds_both_sources_and_the_handler_which_syncs_once_per_job(
    engine: AsyncEngine, settings: Settings, state: RegistryState
) -> None:
    made = Engine()
    register(made, engine=engine, settings=settings, resolver=SystemResolver())
    assert [s.name for s in made.sources] == ["registry", "sweep"]
    assert isinstance(made.sources[1], SweepSource) and set(made.handlers) == {REGISTRY_SYNC}
    (job,) = await made.sources[0].due(datetime.now(UTC), 1)
    await made.handlers[REGISTRY_SYNC](object(), job)
    async with engine.connect() as db:
        assert await db.scalar(select(func.count()).select_from(registry_entries)) == 250
    asked = len(state.requests)
    await made.handlers[REGISTRY_SYNC](object(), job)  # (a redelivery: not run again)
    assert len(state.requests) == asked == 3


async def test_a_sync_job_of_another_id_runs(engine: AsyncEngine, settings: Settings, state: RegistryState) -> None:
    mirror = RegistryMirror(engine, settings, SystemResolver())
    report = await mirror.run()
    assert report.stopped == "complete" and report.entries == 250
    job = Job(kind=REGISTRY_SYNC, id="x" * 32, source="registry", ref="unknown", due_at=datetime.now(UTC))
    await mirror.sync(None, job)
    assert state.requests[-1]["updated_since"]
