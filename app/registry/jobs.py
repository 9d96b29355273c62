"""The registry's scheduled work: the ``registry`` source (one sync job an hour), its handler,
and :func:`register`, which adds them and the ``sweep`` source to the job engine.

:class:`RegistrySyncSource` claims the sync in the database: its row's due time moves on by
``registry_sync_interval_s`` in the same statement that finds it due (a conditional
``UPDATE``), so two schedulers never both hand it out. :meth:`RegistryMirror.sync` is the
``registry_sync`` handler: one :func:`app.registry.sync.run_sync`; a job already finished (a
redelivery) is not run again. A sync's failures are its report's ``stopped`` reason, never an
exception out of the handler (a database that is down is the exception: the engine's to count).
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any, Protocol

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.tables.registry import registry_sync
from app.errors import SondeError
from app.guard import Resolver
from app.net.agent import user_agent
from app.net.dial import Dialler
from app.queue.model import REGISTRY_SYNC, Job, Outcome, Source
from app.registry.client import PageClient
from app.registry.sync import SyncLimits, SyncReport, ensure_state, registry_key, run_sync
from app.settings import Settings
from app.sweeps.policy import SweepPolicy
from app.sweeps.source import SweepSource

SOURCE = "registry"
Handler = Callable[[Any, Job], Awaitable[None]]


class JobRegistry(Protocol):
    """What :func:`register` needs of the engine's registry."""

    def add_source(self, source: Source) -> None:
        """Register a source."""
        ...

    def add_handler(self, kind: str, handler: Handler) -> None:
        """Register the handler of a kind of job."""
        ...


class RegistryNotConfigured(SondeError):
    """No registry is configured: nothing is mirrored or swept."""

    def __init__(self) -> None:
        super().__init__("registry_not_configured", "no registry is configured (set MCP_SONDE_REGISTRY_URL)")


def configured_url(settings: Settings) -> str:
    """The registry's base URL.

    Raises:
        RegistryNotConfigured: ``registry_url`` is unset.
    """
    if settings.registry_url is None:
        raise RegistryNotConfigured
    return settings.registry_url


class RegistrySyncSource:
    """The ``registry`` source: one ``registry_sync`` job per interval (see the module docs)."""

    name = SOURCE

    def __init__(self, engine: AsyncEngine, settings: Settings) -> None:
        self.engine = engine
        self.key = registry_key(configured_url(settings))
        self.interval = timedelta(seconds=settings.registry_sync_interval_s)

    async def due(self, now: datetime, limit: int) -> list[Job]:
        """The sync job, when it is due (claimed: handed out once per interval)."""
        if limit < 1:
            return []
        await ensure_state(self.engine, self.key, now)
        job_id = uuid.uuid4().hex
        async with self.engine.begin() as db:
            row = (await db.execute(select(registry_sync.c.next_due).where(registry_sync.c.registry == self.key))).one()
            claimed = await db.execute(
                update(registry_sync)
                .where(registry_sync.c.registry == self.key, registry_sync.c.next_due <= now)
                .values(next_due=now + self.interval, claimed_job=job_id)
            )
        if claimed.rowcount != 1:
            return []
        return [Job(kind=REGISTRY_SYNC, id=job_id, source=SOURCE, ref=self.key, due_at=row.next_due)]

    async def finished(self, outcome: Outcome) -> None:
        """Nothing to record: the handler records the sync itself."""


class RegistryMirror:
    """The ``registry_sync`` handler, bound to its database and network."""

    def __init__(
        self,
        engine: AsyncEngine,
        settings: Settings,
        resolver: Resolver,
        network_backend: Dialler | None = None,
    ) -> None:
        self.engine = engine
        self.settings = settings
        self.client = PageClient(
            registry_url=configured_url(settings),
            resolver=resolver,
            allow_private=settings.allow_private,
            max_bytes=settings.registry_max_bytes,
            page_limit=settings.registry_page_limit,
            ca_bundle=settings.ca_bundle,
            network_backend=network_backend,
            user_agent=user_agent(settings),
        )
        self.limits = SyncLimits(settings.registry_max_pages, settings.registry_sync_budget_s,
                                 settings.registry_page_timeout_s)  # fmt: skip

    async def run(self, job_id: str | None = None) -> SyncReport:
        """One sync now."""
        return await run_sync(self.engine, self.client, self.limits, sweep_interval_s=self.settings.sweep_interval_s,
                              job_id=job_id)  # fmt: skip

    async def sync(self, ctx: Any, job: Job) -> None:
        """The ``registry_sync`` handler: ``async def sync(ctx, job)`` (``ctx`` unused; idempotent on ``job.id``)."""
        async with self.engine.connect() as db:
            done = await db.scalar(select(registry_sync.c.finished_job).where(registry_sync.c.registry == job.ref))
        if done == job.id:
            return
        await self.run(job.id)


def register(
    registry: JobRegistry,
    *,
    engine: AsyncEngine,
    settings: Settings,
    resolver: Resolver,
    network_backend: Dialler | None = None,
) -> tuple[RegistrySyncSource, SweepSource, RegistryMirror]:
    """Add the ``registry`` and ``sweep`` sources and the ``registry_sync`` handler to ``registry``.

    ``engine`` is the history database's (its schema at revision 0005 or later).
    """
    source = RegistrySyncSource(engine, settings)
    sweep = SweepSource(engine, SweepPolicy.of(settings))
    mirror = RegistryMirror(engine, settings, resolver, network_backend)
    registry.add_source(source)
    registry.add_source(sweep)
    registry.add_handler(REGISTRY_SYNC, mirror.sync)
    return source, sweep, mirror
