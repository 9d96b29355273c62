"""Tool lists looked up as baselines, and the baseline a maintainer approved for a server.

A baseline is a stored tool list found by the run that read it (its attestation id), by its
schema fingerprint (the newest stored list with that fingerprint: lists that differ only in
descriptions share one), as the list of the server's newest run that read one in full, or the
server's approved one (``baselines``: one per server; approving again replaces it). The table
keeps the tool set, not the run: asked for, an approved baseline is given with the server's
newest kept run that read that list (none once pruning took them all). Who may approve is the
service's concern (:mod:`app.http.routes.baseline`).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, or_, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.tables.history import baselines, runs, servers, toolsets
from app.errors import SondeError
from app.history.records import Baseline, Toolset, utc

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


def named(run_id: str) -> ColumnElement[bool]:
    """The run called ``run_id``: by its run id or by its attestation id (the same for a served
    check; a scheduled run is stored under its job's id and signed under its attestation id, the
    id its answers and webhooks show)."""
    return or_(runs.c.run_id == run_id, runs.c.attestation_id == run_id)


async def by_run(db: AsyncConnection, run_id: str, server_id: str | None = None) -> Toolset | None:
    """The tool list read by the run ``run_id`` (:func:`named`; of the server ``server_id``, if given)."""
    query = select(*_COLUMNS).join(runs, runs.c.toolset == toolsets.c.id).where(named(run_id))
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


async def latest(db: AsyncConnection, server_id: str) -> Toolset | None:
    """The tool list of the server's newest run that read one in full (by ``observed_at``, then
    storage order), with that run's id."""
    query = (
        select(*_COLUMNS, runs.c.run_id)
        .select_from(runs)
        .join(servers, servers.c.id == runs.c.server)
        .join(toolsets, toolsets.c.id == runs.c.toolset)
        .where(servers.c.server_id == server_id)
        .order_by(runs.c.observed_at.desc(), runs.c.id.desc())
        .limit(1)
    )
    row = (await db.execute(query)).first()
    return None if row is None else _toolset(row, row.run_id)


async def approved(db: AsyncConnection, server_id: str, newest_run: bool = False) -> Baseline | None:
    """The baseline approved for the server, if any (with ``newest_run``, with the server's newest
    kept run that read it as its ``run_id``)."""
    query = (
        select(*_COLUMNS, baselines.c.server, baselines.c.approved_at, baselines.c.approved_by)
        .join(baselines, baselines.c.toolset == toolsets.c.id)
        .join(servers, servers.c.id == baselines.c.server)
        .where(servers.c.server_id == server_id)
    )
    row = (await db.execute(query)).first()
    if row is None:
        return None
    newest = (
        select(runs.c.run_id)
        .where(runs.c.server == row.server, runs.c.toolset == row.id)
        .order_by(runs.c.observed_at.desc(), runs.c.id.desc())
        .limit(1)
    )
    run_id = await db.scalar(newest) if newest_run else None
    return Baseline(toolset=_toolset(row, run_id), approved_at=utc(row.approved_at), approved_by=row.approved_by)


Confirm = Callable[[Baseline], Awaitable[None]]
#: The approval that only another proof of control of the host replaces.
HOST_PROOF = "host_proof"


class BaselineHeld(SondeError):
    """The host approved this server's baseline; only another proof of control replaces it."""

    def __init__(self) -> None:
        super().__init__(
            "baseline_held", "the host approved this server's baseline: only a proof of control of the host replaces it"
        )


async def approve(
    db: AsyncConnection, server_id: str, run_id: str, by: str, at: datetime, confirm: Confirm | None = None
) -> Baseline | None:
    """Approve the tool list of the server's run ``run_id``; ``None`` when the server has no such
    run, or the run read no complete list. ``confirm`` is awaited with the baseline once it is
    written, before the caller's transaction ends: whatever it raises undoes the approval.

    A baseline approved by proof of control of the host is replaced only by another such proof:
    a payment buys an approval where the host has given none, never over the host's word.

    Raises:
        BaselineHeld: ``by`` is not ``host_proof`` and the host approved the server's baseline.
    """
    query = (
        select(servers.c.id.label("server"), *_COLUMNS)
        .select_from(runs)
        .join(servers, servers.c.id == runs.c.server)
        .join(toolsets, toolsets.c.id == runs.c.toolset)
        .where(named(run_id), servers.c.server_id == server_id)
    )
    row = (await db.execute(query)).first()
    if row is None:
        return None
    insert = postgresql.insert if db.dialect.name == "postgresql" else sqlite.insert
    values = {"server": row.server, "toolset": row.id, "approved_at": at, "approved_by": by}
    statement = insert(baselines).values(values)
    held = None if by == HOST_PROOF else baselines.c.approved_by != HOST_PROOF
    upsert = statement.on_conflict_do_update(index_elements=[baselines.c.server], set_=values, where=held)
    if (await db.execute(upsert)).rowcount == 0:
        raise BaselineHeld()
    baseline = Baseline(toolset=_toolset(row, run_id), approved_at=at, approved_by=by)
    if confirm is not None:
        await confirm(baseline)
    return baseline
