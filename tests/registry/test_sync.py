"""The mirror against the local registry (a real HTTP server on loopback), on SQLite and PostgreSQL."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.tables.registry import registry_endpoints, registry_entries, registry_sync
from app.guard import SystemResolver
from app.registry.client import PageClient
from app.registry.sync import SyncLimits, run_sync
from tests.servers.registry import EPOCH, MALFORMED, RegistryState, generated, registry_server

pytestmark = pytest.mark.anyio
COUNT = 2000
LIMITS = SyncLimits(max_pages=1000, budget_s=60.0, page_timeout_s=10.0)


@pytest.fixture
def state() -> RegistryState:
    return RegistryState(entries=generated(COUNT), malformed=[raw for raw, _ in MALFORMED])


@pytest.fixture
def base(state: RegistryState) -> Iterator[str]:
    with registry_server(state) as url:
        yield url


def client(base: str, *, limit: int = 100, max_bytes: int = 1_048_576) -> PageClient:
    return PageClient(base, SystemResolver(), allow_private=True, max_bytes=max_bytes, page_limit=limit)


async def scalar(engine: AsyncEngine, query: object) -> object:
    async with engine.connect() as db:
        return await db.scalar(query)  # type: ignore[call-overload]


async def test_a_full_import_then_incremental_syncs_mark_deleted_and_deprecated_entries(
    engine: AsyncEngine, state: RegistryState, base: str
) -> None:
    report = await run_sync(engine, client(base), LIMITS, sweep_interval_s=86_400)
    assert report.stopped == "complete" and report.full
    assert report.pages == 20  # 2,000 good entries, 100 a page (the malformed ride on the first)
    assert report.skipped == {
        "entry_name_invalid": 1, "entry_version_invalid": 1, "entry_shape": 1, "entry_remotes_invalid": 1,
        "entry_duplicate_member": 1, "entry_meta_invalid": 1, "entry_time_invalid": 1, "remote_transport_unknown": 1,
        # remotes kept, never probed (the rows' skip reasons, below)
        "url_template": 1, "needs_headers": 1, "refused:scheme_not_https": 1,
    }  # fmt: skip
    assert await scalar(engine, select(func.count()).select_from(registry_entries)) == COUNT + 5
    reasons = {reason: n for reason, n in (await _reasons(engine))}
    # Under the development switch (a loopback registry) the private IP literal passes the form check;
    # the production-rules test below refuses it.
    assert reasons == {None: COUNT + 1, "url_template": 1, "needs_headers": 1, "refused:scheme_not_https": 1}
    assert report.swept == COUNT + 1
    assert state.requests[0] == {"limit": "100"}
    newest = EPOCH + timedelta(seconds=COUNT - 1)
    async with engine.connect() as db:
        row = (await db.execute(select(registry_sync))).one()
    assert row.full_done and row.newest_updated_at.replace(tzinfo=None) == newest.replace(tzinfo=None)
    assert row.last_report["stopped"] == "complete"

    later = EPOCH + timedelta(days=3)
    state.touch(5, "deleted", later)
    state.touch(6, "deprecated", later + timedelta(seconds=1))
    state.requests.clear()
    second = await run_sync(engine, client(base), LIMITS, sweep_interval_s=86_400)
    assert second.stopped == "complete" and not second.full
    assert state.requests[0]["updated_since"] == "2026-01-01T00:33:19Z"
    assert second.entries == 3  # the newest entry (at updated_since) and the two touched
    statuses = dict(await _statuses(engine, ["io.example.fixture/server-00005", "io.example.fixture/server-00006"]))
    assert statuses == {"io.example.fixture/server-00005": "deleted", "io.example.fixture/server-00006": "deprecated"}
    assert second.swept == COUNT - 1  # their endpoints stop being swept

    state.requests.clear()
    third = await run_sync(engine, client(base), LIMITS, sweep_interval_s=86_400)
    assert state.requests[0]["updated_since"] == "2026-01-04T00:00:01Z" and third.entries == 1


async def _reasons(engine: AsyncEngine) -> list[tuple[str | None, int]]:
    async with engine.connect() as db:
        query = select(registry_endpoints.c.skip_reason, func.count()).group_by(registry_endpoints.c.skip_reason)
        return list((await db.execute(query)).all())


async def _statuses(engine: AsyncEngine, names: list[str]) -> list[tuple[str, str]]:
    async with engine.connect() as db:
        query = select(registry_entries.c.name, registry_entries.c.status).where(registry_entries.c.name.in_(names))
        return list((await db.execute(query)).all())


async def test_a_new_version_takes_the_endpoints_out_of_the_old_one(
    engine: AsyncEngine, state: RegistryState, base: str
) -> None:
    state.entries, state.malformed = generated(3), []
    await run_sync(engine, client(base), LIMITS, sweep_interval_s=86_400)
    newer = generated(3)[1]
    newer["server"]["version"] = "2.0.0"
    newer["_meta"]["io.modelcontextprotocol.registry/official"]["updatedAt"] = "2026-02-01T00:00:00Z"
    state.entries.append(newer)
    report = await run_sync(engine, client(base), LIMITS, sweep_interval_s=86_400)
    async with engine.connect() as db:
        query = select(registry_entries.c.version, registry_entries.c.latest)
        latest = (await db.execute(query.where(registry_entries.c.name == "io.example.fixture/server-00001"))).all()
    assert sorted(latest) == [("1.0.0", False), ("2.0.0", True)]
    assert report.swept == 3  # one URL, swept once, now through the latest version


@pytest.mark.parametrize(
    ("mode", "stopped"),
    [("loop", "cursor_loop"), ("garbage", "page_not_json"), ("huge", "page_too_large")],
)
async def test_a_hostile_registry_is_bounded(
    engine: AsyncEngine, state: RegistryState, base: str, mode: str, stopped: str
) -> None:
    state.mode = mode
    report = await run_sync(engine, client(base), LIMITS, sweep_interval_s=86_400)
    assert report.stopped == stopped
    assert len(state.requests) <= 3
    async with engine.connect() as db:
        row = (await db.execute(select(registry_sync))).one()
    assert not row.full_done and row.newest_updated_at is None  # a sync cut short moves nothing on


async def test_a_slow_drip_ends_at_the_sync_budget(engine: AsyncEngine, state: RegistryState, base: str) -> None:
    state.mode = "drip"
    started = time.monotonic()
    report = await run_sync(engine, client(base), SyncLimits(100, 1.5, 10.0), sweep_interval_s=86_400)
    assert report.stopped == "budget" and report.pages == 0
    assert time.monotonic() - started < 5


async def test_a_million_listed_entries_stop_at_the_page_bound(
    engine: AsyncEngine, state: RegistryState, base: str
) -> None:
    state.mode = "endless"
    report = await run_sync(engine, client(base, limit=50), SyncLimits(5, 60.0, 10.0), sweep_interval_s=86_400)
    assert report.stopped == "max_pages" and report.pages == 5 and len(state.requests) == 5
    assert await scalar(engine, select(func.count()).select_from(registry_entries)) == 250
