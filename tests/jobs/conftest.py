"""Fixtures of the engine's tests: a history database of each backend, settings and services
for loopback targets, a source that records what it hears, and a unique Redis queue per test."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from app.checking.services import open_history
from app.db import migrate
from app.db.tables.history import runs
from app.queue.model import PROBE, Job, Outcome
from app.settings import Settings
from tests.conftest import LOOPBACK
from tests.history.conftest import asyncpg_url
from tests.history.conftest import postgres_database as upgraded_postgres


@contextmanager
def postgres_database() -> Iterator[str]:
    """A new PostgreSQL database at the newest schema, dropped afterwards: its asyncpg URL."""
    with upgraded_postgres(upgraded=True) as name:
        yield asyncpg_url(name)


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A history database at the newest schema, of the parametrised backend."""
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'history.sqlite3'}"
        asyncio.run(migrate.upgrade(url))
        yield url
        return
    with postgres_database() as url:
        yield url


def job_settings(database_url: str, **overrides: Any) -> Settings:
    """Settings for loopback targets on ``database_url``, no Redis unless given, nothing embedded."""
    values: dict[str, Any] = {
        **LOOPBACK,
        "database_url": database_url,
        "embedded_jobs": False,
        "job_history_wait_s": 1.0,
        "redis_namespace": f"t{uuid.uuid4().hex[:10]}:",
        "jobs_queue": f"mcp-sonde-test:{uuid.uuid4().hex}",
    }
    values.update(overrides)
    return Settings(**values)


def probe_job(url: str, source: str = "test", ref: str = "r1", job_id: str | None = None) -> Job:
    """A probe job of ``url``."""
    return Job(PROBE, job_id or uuid.uuid4().hex, source, ref, datetime.now(UTC), url=url)


@dataclass
class ListSource:
    """A :class:`~app.queue.model.Source` handing out its ``jobs`` once each, recording outcomes."""

    name: str = "test"
    jobs: list[Job] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)
    asked: int = 0

    async def due(self, now: datetime, limit: int) -> list[Job]:
        self.asked += 1
        taken, self.jobs = self.jobs[:limit], self.jobs[limit:]
        return taken

    async def finished(self, outcome: Outcome) -> None:
        self.outcomes.append(outcome)


async def stored_runs(url: str, run_id: str | None = None) -> int:
    """How many runs the history at ``url`` holds (with ``run_id``, if given)."""
    history = open_history(url)
    try:
        async with history.engine.connect() as db:
            query = select(func.count()).select_from(runs)
            if run_id is not None:
                query = query.where(runs.c.run_id == run_id)
            return int(await db.scalar(query) or 0)
    finally:
        await history.aclose()


def runs_by_id(url: str) -> Counter[str]:
    """The run ids in the history at ``url``, with how often each is there (from sync code)."""

    async def read() -> Counter[str]:
        history = open_history(url)
        try:
            async with history.engine.connect() as db:
                return Counter((await db.scalars(select(runs.c.run_id))).all())
        finally:
            await history.aclose()

    return asyncio.run(read())
