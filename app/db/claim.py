"""The claim of due rows: hand out each row whose due time has come to one claimer only.

Three stores hand out work this way (the monitors' due runs, :mod:`app.monitors.store`; the
webhooks' due attempts, :mod:`app.webhooks.store`; the swept endpoints, :mod:`app.sweeps.source`),
and more than one scheduler or worker may claim at once. :func:`claim_due`, in the caller's
transaction:

1. selects up to ``limit`` rows of the table whose due column is ``<= now`` (and that meet the
   caller's ``where``), oldest due first;
2. on PostgreSQL locks them with ``SELECT ... FOR UPDATE SKIP LOCKED``: two claimers at once
   take different rows, neither waits for the other's transaction, and a row locked by another
   writer is left for a later claim instead of blocking this one;
3. for each row, runs a compare-and-set ``UPDATE``: the row moves on (to the values the
   caller's ``move`` gives for it, its new due time among them) only if its due column still
   holds the value read and the caller's ``still`` conditions (its state) hold. This is on both
   backends. SQLite has no row locks: the select locks nothing (its readers never wait for the
   writer, and the transaction takes the write lock only at its first update), so two claimers
   can read the same rows, and the compare-and-set is what hands each out once: the second
   update finds the due time moved and hits no row. On PostgreSQL the lock holds the rows as
   read until the commit, so there it always hits unless the caller changed the row itself;
   it keeps one statement, and one guarantee, for both;
4. yields each row whose update hit exactly one row, with the values it moved to, before the
   next row is updated (what the caller writes for a row it got is in the same transaction).

What a caller gets: the rows handed to it and to no other claimer, each with the values it
moved to, in due order, at most ``limit`` of them. There may be fewer: a row another claimer
moved first, or that another transaction holds locked, is passed over, neither waited for nor
tried again within the call (it is handed out again only when the due time it was moved to
comes). ``move`` may pass a row over too (``None``: the caller wrote what that row needs
itself, as the sweep's opt-out skip does); the claim does not update such a row. Nothing is
committed here: the caller's transaction commits the claims and what it wrote for them
together, or none of them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Column, ColumnElement, Row, Table, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

#: A row the claim read: the table's key, the caller's columns, the due time.
Read = Row[*tuple[Any, ...]]
#: What a row read moves to: the compare-and-set's values, or ``None`` to pass the row over.
Move = Callable[[Read], Awaitable[Mapping[str, Any] | None]]


async def claim_due(
    db: AsyncConnection,
    table: Table,
    columns: Sequence[Column[Any]],
    *,
    due: Column[Any],
    now: datetime,
    limit: int,
    move: Move,
    where: Sequence[ColumnElement[bool]] = (),
    still: Sequence[ColumnElement[bool]] = (),
) -> AsyncIterator[tuple[Read, Mapping[str, Any]]]:
    """Claim up to ``limit`` rows of ``table`` due at ``now`` in ``db``'s transaction (see the module docs).

    Reads the table's (single-column) primary key, ``columns`` and ``due``, in that order, of
    the rows that meet ``where`` and whose ``due`` is ``<= now``; each moves to ``move(row)``
    where its key, ``still`` and its ``due`` as read all hold. Yields ``(row, values moved to)``
    for each row claimed. ``move`` is awaited just before its row's update, in the same
    transaction (it may write there itself). The rows are claimed as the caller iterates: a
    caller iterates to the end (one that stops early leaves the rest of the rows read unclaimed).
    """
    (key,) = table.primary_key.columns
    query = (
        select(key, *columns, due)
        .where(*where, due <= now)
        .order_by(due)
        .limit(limit)
    )  # fmt: skip
    if db.dialect.name == "postgresql":
        query = query.with_for_update(skip_locked=True)
    for row in (await db.execute(query)).all():
        values = await move(row)
        if values is None:
            continue
        read = row._mapping
        moved = await db.execute(
            update(table)
            .where(key == read[key], *still, due == read[due])  # (unless another claimed it first)
            .values(values)
        )
        if moved.rowcount == 1:
            yield row, values
