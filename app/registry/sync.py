"""One registry sync: a full import first, then incremental ones by ``updated_since``.

Policy: a sync reads ``GET /v0.1/servers`` page by page, following ``metadata.nextCursor``
(opaque, used exactly as given, per the published API), and stops, with the reason in its
:class:`SyncReport`, at the first of:

- ``complete``: a page without a next cursor;
- ``cursor_loop``: a cursor already followed in this sync (a registry that loops);
- ``max_pages``: ``registry_max_pages`` pages read (a registry that lists without end);
- ``budget``: ``registry_sync_budget_s`` spent (each page also has its own budget,
  :mod:`app.registry.client`; a slow drip ends at the smaller of the two);
- a page that could not be had or read (its reason: ``page_timeout``, ``page_too_large``,
  ``page_not_json``, ``page_shape``, ...; :mod:`app.registry.client`, :mod:`app.registry.page`).

Whatever pages were read are kept (each is its own transaction, and importing is idempotent).
Only a ``complete`` sync moves the sync state on: the first marks the full import done, and
every one records the newest ``updatedAt`` seen, which the next sync asks for as
``updated_since`` (RFC 3339). A sync cut short leaves it where it was, so the next one reads
the same span again and nothing updated in between is missed. The report counts what was
skipped, by reason key (entries, remotes, pages), and is kept in the sync-state row.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.tables.registry import registry_sync
from app.history.records import utc
from app.registry.client import PageClient, PageFailed
from app.registry.importer import import_entries, refresh_swept
from app.registry.page import PageRefused, read_page

logger = logging.getLogger("mcp_sonde.registry")


def registry_key(registry_url: str) -> str:
    """The sync-state row's key: the SHA-256 of the registry's base URL."""
    return hashlib.sha256(registry_url.rstrip("/").encode()).hexdigest()


@dataclass
class SyncReport:
    """What one sync did."""

    stopped: str = "complete"
    full: bool = True
    pages: int = 0
    entries: int = 0
    endpoints: int = 0
    swept: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    newest_updated_at: datetime | None = None

    def as_json(self) -> dict[str, Any]:
        """The report as kept in the sync-state row."""
        newest = self.newest_updated_at.isoformat() if self.newest_updated_at else None
        return {"stopped": self.stopped, "full": self.full, "pages": self.pages, "entries": self.entries,
                "endpoints": self.endpoints, "swept": self.swept, "skipped": dict(sorted(self.skipped.items())),
                "newest_updated_at": newest}  # fmt: skip


@dataclass(frozen=True)
class SyncLimits:
    """The bounds of one sync (from the settings ``registry_*``)."""

    max_pages: int
    budget_s: float
    page_timeout_s: float


async def ensure_state(engine: AsyncEngine, key: str, now: datetime) -> None:
    """Make the sync-state row (due now) unless it is there."""
    insert = postgresql.insert if engine.dialect.name == "postgresql" else sqlite.insert
    async with engine.begin() as db:
        await db.execute(insert(registry_sync).values(registry=key, next_due=now, full_done=False)
                         .on_conflict_do_nothing(index_elements=["registry"]))  # fmt: skip


async def run_sync(
    engine: AsyncEngine,
    client: PageClient,
    limits: SyncLimits,
    *,
    sweep_interval_s: float,
    job_id: str | None = None,
) -> SyncReport:
    """Run one sync (see the module docs) and record it in the sync-state row."""
    key = registry_key(client.registry_url)
    now = datetime.now(UTC)
    await ensure_state(engine, key, now)
    async with engine.connect() as db:
        state = (await db.execute(select(registry_sync).where(registry_sync.c.registry == key))).one()
    since = utc(state.newest_updated_at) if state.full_done and state.newest_updated_at is not None else None
    report = SyncReport(full=since is None, newest_updated_at=since)
    started = time.monotonic()
    cursor: str | None = None
    followed: set[str] = set()
    while True:
        if report.pages >= limits.max_pages:
            report.stopped = "max_pages"
            break
        left = limits.budget_s - (time.monotonic() - started)
        if left <= 0:
            report.stopped = "budget"
            break
        try:
            body = await client.fetch(cursor, since, min(limits.page_timeout_s, left))
            page = read_page(body)
        except (PageFailed, PageRefused) as exc:
            report.stopped = exc.reason
            report.skipped[exc.reason] += 1
            if exc.reason == "page_timeout" and time.monotonic() - started >= limits.budget_s:
                report.stopped = "budget"
            break
        report.pages += 1
        report.skipped.update(page.skipped)
        report.entries += len(page.entries)
        report.endpoints += await import_entries(
            engine,
            page.entries,
            now=datetime.now(UTC),
            allow_private=client.allow_private,
            interval_s=sweep_interval_s,
            skipped=report.skipped,
        )
        for entry in page.entries:
            if entry.updated_at is not None and (report.newest_updated_at is None
                                                 or entry.updated_at > report.newest_updated_at):  # fmt: skip
                report.newest_updated_at = entry.updated_at
        if page.next_cursor is None:
            break
        if page.next_cursor in followed:
            report.stopped = "cursor_loop"
            break
        followed.add(page.next_cursor)
        cursor = page.next_cursor
    report.swept = await refresh_swept(engine)
    await _record(engine, key, report, job_id)
    logger.info(
        "registry sync %s: %d pages, %d entries, %d endpoints, %d swept, skipped %s",
        report.stopped, report.pages, report.entries, report.endpoints, report.swept, dict(report.skipped),
    )  # fmt: skip
    return report


async def _record(engine: AsyncEngine, key: str, report: SyncReport, job_id: str | None) -> None:
    values: dict[str, Any] = {"last_sync_at": datetime.now(UTC), "last_report": report.as_json()}
    if job_id is not None:
        values["finished_job"] = job_id
    if report.stopped == "complete":
        values["full_done"] = True
        values["newest_updated_at"] = report.newest_updated_at
    async with engine.begin() as db:
        await db.execute(update(registry_sync).where(registry_sync.c.registry == key).values(**values))
