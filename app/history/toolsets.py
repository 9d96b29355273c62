"""Stored tool lists looked up: by the run that read one, by schema fingerprint, or a server's newest.

A tool list is found by the run that read it (its run id or attestation id), by its schema
fingerprint (the newest stored list with that fingerprint: lists that differ only in
descriptions share one), or as the list of the server's newest run that read one in full.
A check's baseline is one of these (:mod:`app.baselines`).
"""

from __future__ import annotations

import json
import zlib
from typing import Any

from sqlalchemy import ColumnElement, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.tables.history import runs, servers, toolsets
from app.history.records import Toolset

#: The columns :func:`toolset_of` reads.
COLUMNS = (
    toolsets.c.id,
    toolsets.c.definitions,
    toolsets.c.definitions_sha256,
    toolsets.c.schema_fingerprint,
    toolsets.c.toolset_fingerprint,
)


def toolset_of(row: Any, run_id: str | None = None) -> Toolset:
    """The tool set of a row selected with :data:`COLUMNS`."""
    return Toolset(
        definitions=tuple(json.loads(zlib.decompress(row.definitions))),
        definitions_sha256=row.definitions_sha256,
        schema_fingerprint=row.schema_fingerprint,
        toolset_fingerprint=row.toolset_fingerprint,
        run_id=run_id,
    )


def named(run_id: str) -> ColumnElement[bool]:
    """The run called ``run_id``: by its run id or by its attestation id (the same for a served
    check; a scheduled run is stored under its job's id and signed under its attestation id, the
    id its answers and webhooks show)."""
    return or_(runs.c.run_id == run_id, runs.c.attestation_id == run_id)


async def by_run(db: AsyncConnection, run_id: str, server_id: str | None = None) -> Toolset | None:
    """The tool list read by the run ``run_id`` (:func:`named`; of the server ``server_id``, if given)."""
    query = select(*COLUMNS).join(runs, runs.c.toolset == toolsets.c.id).where(named(run_id))
    if server_id is not None:
        query = query.join(servers, servers.c.id == runs.c.server).where(servers.c.server_id == server_id)
    row = (await db.execute(query)).first()
    return None if row is None else toolset_of(row, run_id)


async def by_fingerprint(db: AsyncConnection, schema_fingerprint: str) -> Toolset | None:
    """The newest stored tool list with this schema fingerprint."""
    query = (
        select(*COLUMNS)
        .where(toolsets.c.schema_fingerprint == schema_fingerprint)
        .order_by(toolsets.c.first_seen.desc(), toolsets.c.id.desc())
        .limit(1)
    )
    row = (await db.execute(query)).first()
    return None if row is None else toolset_of(row)


async def latest(db: AsyncConnection, server_id: str) -> Toolset | None:
    """The tool list of the server's newest run that read one in full (by ``observed_at``, then
    storage order), with that run's id."""
    query = (
        select(*COLUMNS, runs.c.run_id)
        .select_from(runs)
        .join(servers, servers.c.id == runs.c.server)
        .join(toolsets, toolsets.c.id == runs.c.toolset)
        .where(servers.c.server_id == server_id)
        .order_by(runs.c.observed_at.desc(), runs.c.id.desc())
        .limit(1)
    )
    row = (await db.execute(query)).first()
    return None if row is None else toolset_of(row, row.run_id)
