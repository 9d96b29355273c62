"""Tool lists looked up as baselines, and the baseline a maintainer approved for a server.

A baseline is a stored tool list found by the run that read it (its attestation id), by its
schema fingerprint (the newest stored list with that fingerprint: lists that differ only in
descriptions share one), or the server's approved one (``baselines``: one per server; approving
again replaces it). Who may approve is the service's concern (:mod:`app.service.baseline`).
"""

from __future__ import annotations

import json
import zlib
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from app.history.records import Baseline, Toolset, utc
from app.history.schema import baselines, runs, servers, toolsets

_COLUMNS = (
    toolsets.c.id,
    toolsets.c.definitions,
    toolsets.c.definitions_sha256,
    toolsets.c.schema_fingerprint,
    toolsets.c.toolset_fingerprint,
)


def _toolset(row: Any, run_id: str | None = None) -> Toolset:
    return Toolset(
        definitions=tuple(json.loads(zlib.decompress(row.definitions))),
        definitions_sha256=row.definitions_sha256,
        schema_fingerprint=row.schema_fingerprint,
        toolset_fingerprint=row.toolset_fingerprint,
        run_id=run_id,
    )


async def by_run(db: AsyncConnection, run_id: str, server_id: str | None = None) -> Toolset | None:
    """The tool list read by the run ``run_id`` (of the server ``server_id``, if given)."""
    query = select(*_COLUMNS).join(runs, runs.c.toolset == toolsets.c.id).where(runs.c.run_id == run_id)
    if server_id is not None:
        query = query.join(servers, servers.c.id == runs.c.server).where(servers.c.server_id == server_id)
    row = (await db.execute(query)).first()
    return None if row is None else _toolset(row, run_id)


async def by_fingerprint(db: AsyncConnection, schema_fingerprint: str) -> Toolset | None:
    """The newest stored tool list with this schema fingerprint."""
    query = (
        select(*_COLUMNS)
        .where(toolsets.c.schema_fingerprint == schema_fingerprint)
        .order_by(toolsets.c.first_seen.desc(), toolsets.c.id.desc())
        .limit(1)
    )
    row = (await db.execute(query)).first()
    return None if row is None else _toolset(row)


async def approved(db: AsyncConnection, server_id: str) -> Baseline | None:
    """The baseline approved for the server, if any."""
    query = (
        select(*_COLUMNS, baselines.c.approved_at, baselines.c.approved_by)
        .join(baselines, baselines.c.toolset == toolsets.c.id)
        .join(servers, servers.c.id == baselines.c.server)
        .where(servers.c.server_id == server_id)
    )
    row = (await db.execute(query)).first()
    if row is None:
        return None
    return Baseline(toolset=_toolset(row), approved_at=utc(row.approved_at), approved_by=row.approved_by)


async def approve(db: AsyncConnection, server_id: str, run_id: str, by: str, at: datetime) -> Baseline | None:
    """Approve the tool list of the server's run ``run_id``; ``None`` when the server has no such
    run, or the run read no complete list."""
    query = (
        select(servers.c.id.label("server"), *_COLUMNS)
        .select_from(runs)
        .join(servers, servers.c.id == runs.c.server)
        .join(toolsets, toolsets.c.id == runs.c.toolset)
        .where(runs.c.run_id == run_id, servers.c.server_id == server_id)
    )
    row = (await db.execute(query)).first()
    if row is None:
        return None
    insert = postgresql.insert if db.dialect.name == "postgresql" else sqlite.insert
    values = {"server": row.server, "toolset": row.id, "approved_at": at, "approved_by": by}
    statement = insert(baselines).values(values)
    await db.execute(statement.on_conflict_do_update(index_elements=[baselines.c.server], set_=values))
    return Baseline(toolset=_toolset(row, run_id), approved_at=at, approved_by=by)
