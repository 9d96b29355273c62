"""Entries of a registry page written to the mirror's tables (:mod:`app.db.tables.registry`).

Each page is one transaction. An entry is upserted by ``(name, version)``: its status,
timestamps and ``latest`` are the registry's newest word. When it is the latest version, the
other versions of its name stop being latest (the registry says so itself on its next
``updatedAt``; this keeps the mirror right in between). Its endpoints are made to match its
``remotes``: new ones are added, with a first due time spread over the sweep interval
(:func:`app.sweeps.policy.first_due`), kept ones keep their schedule, gone ones are deleted.
A ``deleted`` or ``deprecated`` entry is kept, marked; :func:`refresh_swept` then takes its
endpoints out of the sweep. The directory rows of the stored servers an entry lists (or listed
before this import) are made again in the same transaction (:func:`app.directory.rows.refresh_registry`).
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from sqlalchemy import and_, delete, func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from app.db.tables.registry import registry_endpoints, registry_entries
from app.directory.rows import refresh_registry
from app.registry.page import Entry
from app.registry.remotes import Endpoint, endpoint_of
from app.sweeps.policy import first_due


async def import_entries(
    engine: AsyncEngine,
    entries: list[Entry],
    *,
    now: datetime,
    allow_private: bool,
    interval_s: float,
    skipped: Counter[str] | None = None,
) -> int:
    """Write ``entries`` (one page) in one transaction; how many endpoints they list (each kept but
    never probed also counted in ``skipped`` by its reason: ``url_template``, ``needs_headers``, ...)."""
    insert = postgresql.insert if engine.dialect.name == "postgresql" else sqlite.insert
    listed = 0
    touched: set[str] = set()
    async with engine.begin() as db:
        for entry in entries:
            values = {
                "status": entry.status,
                "published_at": entry.published_at,
                "updated_at": entry.updated_at,
                "latest": entry.latest,
                "seen_at": now,
                "title": entry.title,
                "description": entry.description,
            }
            statement = insert(registry_entries).values(name=entry.name, version=entry.version, **values)
            statement = statement.on_conflict_do_update(index_elements=["name", "version"], set_=values)
            key = (await db.execute(statement.returning(registry_entries.c.id))).scalar_one()
            if entry.latest:
                await db.execute(
                    update(registry_entries)
                    .where(
                        and_(
                            registry_entries.c.name == entry.name,
                            registry_entries.c.id != key,
                            registry_entries.c.latest,
                        )
                    )
                    .values(latest=False)
                )
            endpoints: dict[str, Endpoint] = {}
            for remote in entry.remotes:
                endpoint = endpoint_of(remote, allow_private=allow_private)
                endpoints.setdefault(endpoint.url, endpoint)
            listed += len(endpoints)
            if skipped is not None:
                skipped.update(e.skip_reason for e in endpoints.values() if e.skip_reason is not None)
            touched |= await _match(db, key, endpoints, now, interval_s)
        await refresh_registry(db, touched)
    return listed


async def _match(
    db: AsyncConnection, entry: int, endpoints: dict[str, Endpoint], now: datetime, interval_s: float
) -> set[str]:
    """Make the entry's endpoint rows match ``endpoints``; the server ids listed before and now."""
    table = registry_endpoints
    rows = (await db.execute(select(table.c.url, table.c.id, table.c.server_id).where(table.c.entry == entry))).all()
    known = {row.url: row.id for row in rows}
    touched = {row.server_id for row in rows} | {endpoint.server_id for endpoint in endpoints.values()}
    gone = [key for url, key in known.items() if url not in endpoints]
    if gone:
        await db.execute(delete(table).where(table.c.id.in_(gone)))
    for url, endpoint in endpoints.items():
        facts = {"host": endpoint.host, "transport": endpoint.transport, "server_id": endpoint.server_id,
                 "skip_reason": endpoint.skip_reason}  # fmt: skip
        if url in known:
            await db.execute(update(table).where(table.c.id == known[url]).values(**facts))
        else:
            due = first_due(now, endpoint.server_id, interval_s)
            row = {"entry": entry, "url": url, "swept": False, "next_due": due, "failures": 0}
            await db.execute(table.insert().values(**row, **facts))
    return touched


async def refresh_swept(engine: AsyncEngine) -> int:
    """Mark, per ``server_id``, the one endpoint the sweep probes (the lowest id among those of
    active, latest entries that are not skipped); unmark the rest. How many are swept."""
    table, entries, other = registry_endpoints, registry_entries, registry_endpoints.alias("other")
    eligible = (
        select(func.min(other.c.id))
        .join(entries, entries.c.id == other.c.entry)
        .where(other.c.skip_reason.is_(None), entries.c.status == "active", entries.c.latest)
        .group_by(other.c.server_id)
        .correlate(None)
    )
    async with engine.begin() as db:
        await db.execute(update(table).where(table.c.swept, table.c.id.not_in(eligible)).values(swept=False))
        await db.execute(update(table).where(~table.c.swept, table.c.id.in_(eligible)).values(swept=True))
        counted = await db.scalar(select(func.count()).select_from(table).where(table.c.swept))
    return int(counted or 0)
