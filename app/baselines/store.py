"""The baseline a maintainer approved for a server, and how it was approved.

One per server (``baselines``); approving again replaces it. The table keeps the tool set, not
the run: asked for, an approved baseline is given with the server's newest kept run that read
that list (none once pruning took them all). Who may approve is the HTTP layer's concern
(:mod:`app.http.routes.baseline`); a host's proof of control is :mod:`app.baselines.proof`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from app.db.tables.history import baselines, runs, servers, toolsets
from app.errors import SondeError
from app.history.records import Toolset, utc
from app.history.toolsets import COLUMNS, named, toolset_of


@dataclass(frozen=True)
class Baseline:
    """The tool list a maintainer approved for a server, and how the approval was given."""

    toolset: Toolset
    approved_at: datetime
    approved_by: str


async def approved(db: AsyncConnection, server_id: str, newest_run: bool = False) -> Baseline | None:
    """The baseline approved for the server, if any (with ``newest_run``, with the server's newest
    kept run that read it as its ``run_id``)."""
    query = (
        select(*COLUMNS, baselines.c.server, baselines.c.approved_at, baselines.c.approved_by)
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
    return Baseline(toolset=toolset_of(row, run_id), approved_at=utc(row.approved_at), approved_by=row.approved_by)


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
        select(servers.c.id.label("server"), *COLUMNS)
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
    baseline = Baseline(toolset=toolset_of(row, run_id), approved_at=at, approved_by=by)
    if confirm is not None:
        await confirm(baseline)
    return baseline


class Baselines:
    """The approved baselines, in the history database."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def baseline(self, server_id: str, newest_run: bool = False) -> Baseline | None:
        """The server's approved baseline (see :func:`approved`)."""
        async with self.engine.connect() as db:
            return await approved(db, server_id, newest_run)

    async def approve(self, server_id: str, run_id: str, by: str, confirm: Confirm | None = None) -> Baseline | None:
        """Approve the list of the server's run ``run_id`` (see :func:`approve`; ``confirm`` runs inside
        the approval's transaction, which commits only after it returned: a paid approval settles there)."""
        async with self.engine.begin() as db:
            return await approve(db, server_id, run_id, by, datetime.now(UTC), confirm)
