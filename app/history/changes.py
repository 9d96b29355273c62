"""Changes of a server's tool list, kept as runs are stored.

Policy: a change is recorded between *consecutive* runs of one server that read the list in
full (a run with no complete list, a timeout say, is not a change and does not interrupt the
sequence), ordered by ``observed_at`` (then by storage order). A run stored late, after runs
observed later than it (the queue held it through a database outage), takes its place in the
sequence: its change is taken against the run before it, and the change of the run after it is
taken again against it, so the stored changes are always those of the sequence as observed.

The diff is :func:`app.drift.diff_tools` (bounded per schema, :mod:`app.drift.limits`), run on a
worker thread so a large list never holds the event loop.
"""

from __future__ import annotations

import asyncio
import json
import zlib
from datetime import datetime
from typing import Any

from sqlalchemy import and_, delete, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.tables.history import changes, runs, servers, toolsets
from app.drift import diff_tools
from app.history.records import Change, utc


def pack(value: object) -> bytes:
    """Compressed JSON of a diff (``changes.diff``)."""
    return zlib.compress(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode(), 6)


def unpack(blob: bytes) -> Any:
    """The value :func:`pack` packed."""
    return json.loads(zlib.decompress(blob))


async def definitions(db: AsyncConnection, toolset: int) -> list[dict[str, Any]]:
    """The stored definitions of tool set ``toolset``."""
    blob = await db.scalar(select(toolsets.c.definitions).where(toolsets.c.id == toolset))
    assert blob is not None  # (a run's tool set is kept as long as the run)
    listed: list[dict[str, Any]] = json.loads(zlib.decompress(blob))
    return listed


async def _neighbour(db: AsyncConnection, server: int, run: int, at: datetime, after: bool) -> Any:
    """The run next to ``run`` (before it, or after it) among the server's runs with a tool set."""
    # (the bound on observed_at alone is implied by the other, and is what the index can seek to:
    # without it the whole of the server's runs is read, 25,920 for one checked every 5 minutes)
    if after:
        order = (runs.c.observed_at.asc(), runs.c.id.asc())
        bound = runs.c.observed_at >= at
        beyond = or_(runs.c.observed_at > at, and_(runs.c.observed_at == at, runs.c.id > run))
    else:
        order = (runs.c.observed_at.desc(), runs.c.id.desc())
        bound = runs.c.observed_at <= at
        beyond = or_(runs.c.observed_at < at, and_(runs.c.observed_at == at, runs.c.id < run))
    query = (
        select(runs.c.id, runs.c.observed_at, runs.c.toolset)
        .where(runs.c.server == server, bound, runs.c.toolset.is_not(None), beyond)
        .order_by(*order)
        .limit(1)
    )
    return (await db.execute(query)).first()


async def _prints(db: AsyncConnection, toolset: int) -> tuple[str | None, str | None]:
    row = (
        await db.execute(
            select(toolsets.c.schema_fingerprint, toolsets.c.toolset_fingerprint).where(toolsets.c.id == toolset)
        )
    ).one()
    return row.schema_fingerprint, row.toolset_fingerprint


async def _change(db: AsyncConnection, server: int, run: int, at: datetime, old: int, new: int) -> None:
    """Record the change from tool set ``old`` to ``new``. Two sets whose cleaned definitions are
    equal differ past what cleaning keeps (their fingerprints differ): ``unknown``; with equal
    fingerprints too they are the same list (kept twice under an older key): no change."""
    before, after = await definitions(db, old), await definitions(db, new)
    diff = await asyncio.to_thread(diff_tools, before, after)
    verdict = diff.verdict
    if verdict == "unchanged":
        if await _prints(db, old) == await _prints(db, new):
            return
        verdict = "unknown"
    await db.execute(
        changes.insert().values(
            server=server, run=run, observed_at=at, from_toolset=old, to_toolset=new,
            verdict=verdict, diff=pack(diff.model_dump(mode="json")),
        )
    )  # fmt: skip


async def note(db: AsyncConnection, server: int, run: int, at: datetime, toolset: int) -> None:
    """Record the changes the newly stored ``run`` (with tool set ``toolset``) makes (see the module docs)."""
    previous = await _neighbour(db, server, run, at, after=False)
    if previous is not None and previous.toolset != toolset:
        await _change(db, server, run, at, previous.toolset, toolset)
    following = await _neighbour(db, server, run, at, after=True)
    if following is not None:  # stored late: the next run's change is now against this one
        await db.execute(delete(changes).where(changes.c.run == following.id))
        if following.toolset != toolset:
            await _change(db, server, following.id, following.observed_at, toolset, following.toolset)


async def recent(db: AsyncConnection, server_id: str, limit: int, before: datetime | None) -> list[Change]:
    """The server's newest ``limit`` changes observed before ``before`` (if given), newest first."""
    # The newest ``limit`` first, in the index's order, and only those joined to their run and lists.
    newest = (
        select(changes.c.id, changes.c.run, changes.c.observed_at, changes.c.from_toolset, changes.c.to_toolset,
               changes.c.verdict, changes.c.diff)
        .join(servers, servers.c.id == changes.c.server)
        .where(servers.c.server_id == server_id)
        .order_by(changes.c.observed_at.desc(), changes.c.id.desc())
        .limit(limit)
    )  # fmt: skip
    if before is not None:
        newest = newest.where(changes.c.observed_at < before)
    found = newest.subquery("newest")
    old, new = toolsets.alias("old"), toolsets.alias("new")
    query = (
        select(
            found.c.observed_at,
            found.c.verdict,
            found.c.diff,
            runs.c.run_id,
            old.c.schema_fingerprint.label("old_schema"),
            old.c.toolset_fingerprint.label("old_toolset"),
            new.c.schema_fingerprint.label("new_schema"),
            new.c.toolset_fingerprint.label("new_toolset"),
        )
        .join(runs, runs.c.id == found.c.run)
        .outerjoin(old, old.c.id == found.c.from_toolset)
        .outerjoin(new, new.c.id == found.c.to_toolset)
        .order_by(found.c.observed_at.desc(), found.c.id.desc())
    )
    rows = (await db.execute(query)).all()
    return [_change_of(row) for row in rows]


def _change_of(row: Any) -> Change:
    return Change(
        observed_at=utc(row.observed_at), run_id=row.run_id, before=(row.old_schema, row.old_toolset),
        after=(row.new_schema, row.new_toolset), verdict=row.verdict, diff=unpack(row.diff),
    )  # fmt: skip
