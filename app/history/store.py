"""The history store: one small async interface, and its SQL implementation (PostgreSQL, SQLite).

:meth:`SqlHistory.record` stores a run in one transaction: the server row (made on first sight),
the tool set (once per distinct list of definitions), the run, the day's counter, and what its
``on_record`` hooks keep current (the server's directory row, :mod:`app.directory.rows`); a run id
already stored is a no-op, so a redelivered run is kept once. Reads are single indexed queries
(:mod:`app.db.tables.history`). Credentialed checks never reach the store (the service does not
hand them over; :meth:`record` refuses one that says it is credentialed, as a second guard).
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, date, datetime
from typing import Protocol

from sqlalchemy import func, select, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from app.canonical import canonical_bytes
from app.db.engine import POOL_SIZE, open_engine
from app.db.facts import facts_of
from app.db.tables.history import runs, server_days, servers, toolsets
from app.guard.url import without_query
from app.history import changes as changelog
from app.history import digests, reading, retention
from app.history import toolsets as lookups
from app.history.reading import HistoryRead
from app.history.records import Change, Day, Run, ServerSummary, Toolset, server_id_of, utc
from app.history.uptime import CODES, uptime_of
from app.history.window import Window
from app.history.window import window as summarised

#: What else a run's transaction keeps current, given the connection and the server's key (the
#: directory's row of the server: :func:`app.directory.rows.refresh`, wired by the composition root).
OnRecord = Callable[[AsyncConnection, int], Awaitable[None]]
#: Most runs one history read returns (a server checked every 5 minutes for 90 days: 25,920).
POINTS = 30_000
Point = tuple[datetime, str, str, float | None]


class History(Protocol):
    """What the service asks of the history store."""

    async def record(self, run: Run) -> bool:
        """Store ``run``; ``False`` when its run id was stored already."""
        ...

    async def server(self, server_id: str) -> ServerSummary | None:
        """The stored server, if any."""
        ...

    async def days(self, server_id: str, since: date) -> list[Day]:
        """The server's days from ``since`` (UTC) on, oldest first."""
        ...

    async def envelope(self, attestation_id: str) -> bytes | None:
        """The DSSE envelope of a stored run, by attestation id."""
        ...

    async def points(self, server_id: str, since: datetime, limit: int = POINTS) -> list[Point]:
        """``(observed_at, status, reason, latency_ms)`` of the server's runs from ``since``, oldest first."""
        ...

    async def window(self, server_id: str, since: datetime, limit: int = POINTS) -> Window:
        """What the runs :meth:`points` would return say: their number, latency percentiles, status changes."""
        ...

    async def history(self, server_id: str, since: datetime, limit: int = POINTS) -> HistoryRead | None:
        """The server, its days from ``since`` and what the window from ``since`` (a UTC
        midnight, for the day by day read) says, read together (``None``: not kept here)."""
        ...

    async def changes(self, server_id: str, limit: int = 50, before: datetime | None = None) -> list[Change]:
        """The server's newest ``limit`` tool-list changes (observed before ``before``), newest first."""
        ...

    async def toolset(
        self, *, run_id: str | None = None, schema_fingerprint: str | None = None, server_id: str | None = None
    ) -> Toolset | None:
        """A stored tool list: by the run that read it (of the server ``server_id``, if given), by
        its schema fingerprint, or with ``server_id`` alone the server's newest complete one."""
        ...

    async def prune(self, before: datetime) -> int:
        """Delete runs observed before ``before`` (and tool sets nothing points to); how many runs."""
        ...

    async def prunable(self, before: datetime) -> int:
        """How many runs :meth:`prune` would delete now."""
        ...

    async def ping(self) -> bool:
        """Whether the database answers."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


class Vanished(Exception):
    """A row the transaction found was deleted by another before it read it back (tried again)."""


def toolset_digest(run: Run) -> tuple[bytes, str]:
    """The canonical form of a run's tool definitions and the key of its tool set. The
    fingerprints (of the list as served, before cleaning) are part of the key: two lists that
    differ only past what cleaned definitions keep are two tool sets."""
    canonical = canonical_bytes(list(run.tools or ()))
    prints = f"\n{run.schema_fingerprint or ''}\n{run.toolset_fingerprint or ''}".encode()
    return canonical, hashlib.sha256(canonical + prints).hexdigest()


class SqlHistory:
    """:class:`History` over SQLAlchemy Core (see the module docs)."""

    def __init__(self, engine: AsyncEngine, on_record: Sequence[OnRecord] = ()) -> None:
        self.engine = engine
        self.on_record = tuple(on_record)
        self._insert = postgresql.insert if engine.dialect.name == "postgresql" else sqlite.insert

    @classmethod
    def open(cls, url: str, pool_size: int = POOL_SIZE, on_record: Sequence[OnRecord] = ()) -> SqlHistory:
        """A store on the database at ``url`` (its schema must be current: :mod:`app.db.migrate`)."""
        return cls(open_engine(url, pool_size=pool_size), on_record)

    async def record(self, run: Run) -> bool:
        """See :meth:`History.record`.

        A prune that deletes the tool set this run reuses between its upsert and the run's
        insert (the list was no server's latest any more) fails the run's foreign key: the whole
        transaction is tried once more, which makes the tool set again (as when the prune deletes
        it between the upsert, which found it, and the read of its key). So does a redelivery
        racing the first delivery of one run id, which the second try finds stored.
        """
        if run.credentialed:
            raise ValueError("a credentialed check is never stored")
        try:
            return await self._record(run)
        except (IntegrityError, Vanished):
            return await self._record(run)

    async def _record(self, run: Run) -> bool:
        async with self.engine.begin() as db:
            if self.engine.dialect.name == "postgresql":
                # A run's commit does not wait for the WAL to reach the disk (PostgreSQL 15,
                # "Asynchronous Commit"): a crash of the database server may lose the last few
                # hundred milliseconds of runs, never corrupt or half-store one; the history
                # already counts runs it loses, and a check never waits for one.
                await db.execute(text("SET LOCAL synchronous_commit TO OFF"))
            known = await db.scalar(select(runs.c.id).where(runs.c.run_id == run.run_id))
            if known is not None:
                return False
            server = await self._server_key(db, run)
            toolset = await self._toolset_key(db, run) if run.tools is not None else None
            uptime = uptime_of(run.status, run.reason)
            found = facts_of(run.result)
            inserted = await db.execute(
                runs.insert().values(
                    run_id=run.run_id,
                    server=server,
                    observed_at=run.observed_at,
                    status=run.status,
                    reason=run.reason,
                    uptime=CODES[uptime],
                    protocol_version=run.protocol_version,
                    transport=run.transport,
                    latency_ms=run.latency_ms,
                    total_ms=run.total_ms,
                    toolset=toolset,
                    attestation_id=run.attestation_id,
                    result=zlib.compress(run.result, 6),
                    envelope=zlib.compress(run.envelope, 6),
                    handshake=found.handshake,
                    metadata_published=found.metadata_published,
                    tool_count=found.tool_count,
                )
            )
            primary = inserted.inserted_primary_key
            assert primary is not None  # (an INSERT always has one)
            run_key = primary[0]
            column = uptime  # (the day's counters are named as the uptime states)
            day = run.observed_at.astimezone(UTC).date()
            counted = self._insert(server_days).values(server=server, day=day, up=0, gated=0, down=0, left_out=0)
            counted = counted.values({column: 1}).on_conflict_do_update(
                index_elements=[server_days.c.server, server_days.c.day],
                set_={column: getattr(server_days.c, column) + 1},
            )
            await db.execute(counted)
            # A run stored late (after an outage) never replaces a newer one as the latest.
            await db.execute(
                update(servers)
                .where(servers.c.id == server, servers.c.last_seen <= run.observed_at)
                .values(
                    last_seen=run.observed_at,
                    latest_run=run_key,
                    latest_status=run.status,
                    addresses=list(run.addresses),
                    latest_toolset=toolset if toolset is not None else servers.c.latest_toolset,
                )
            )
            if toolset is not None:
                await changelog.note(db, server, run_key, run.observed_at, toolset)
            for hook in self.on_record:
                await hook(db, server)
        return True

    async def _server_key(self, db: AsyncConnection, run: Run) -> int:
        server_id = server_id_of(run.url)
        made = self._insert(servers).values(
            server_id=server_id, url=without_query(run.url), host=run.host, addresses=list(run.addresses),
            first_seen=run.observed_at, last_seen=run.observed_at,
        )  # fmt: skip
        await db.execute(made.on_conflict_do_nothing(index_elements=[servers.c.server_id]))
        key = await db.scalar(select(servers.c.id).where(servers.c.server_id == server_id))
        assert key is not None
        return int(key)

    async def _toolset_key(self, db: AsyncConnection, run: Run) -> int:
        assert run.tools is not None
        canonical, digest = toolset_digest(run)
        made = self._insert(toolsets).values(
            definitions_sha256=digest, schema_fingerprint=run.schema_fingerprint,
            toolset_fingerprint=run.toolset_fingerprint, tool_count=len(run.tools),
            definitions=zlib.compress(canonical, 6), first_seen=run.observed_at,
        )  # fmt: skip
        await db.execute(made.on_conflict_do_nothing(index_elements=[toolsets.c.definitions_sha256]))
        key = await db.scalar(select(toolsets.c.id).where(toolsets.c.definitions_sha256 == digest))
        if key is None:  # a prune deleted it between the upsert, which found it, and this read
            raise Vanished
        return int(key)

    async def server(self, server_id: str) -> ServerSummary | None:
        """See :meth:`History.server`."""
        async with self.engine.connect() as db:
            row = (await db.execute(reading.server_query(server_id))).first()
        return None if row is None else reading.summary_of(row)

    async def days(self, server_id: str, since: date) -> list[Day]:
        """See :meth:`History.days`."""
        query = (
            select(server_days)
            .join(servers, servers.c.id == server_days.c.server)
            .where(servers.c.server_id == server_id, server_days.c.day >= since)
            .order_by(server_days.c.day)
        )
        async with self.engine.connect() as db:
            rows = (await db.execute(query)).all()
        return [Day(row.day, row.up, row.gated, row.down, row.left_out) for row in rows]

    async def envelope(self, attestation_id: str) -> bytes | None:
        """See :meth:`History.envelope`."""
        async with self.engine.connect() as db:
            blob = await db.scalar(select(runs.c.envelope).where(runs.c.attestation_id == attestation_id).limit(1))
        return None if blob is None else zlib.decompress(blob)

    async def points(self, server_id: str, since: datetime, limit: int = POINTS) -> list[Point]:
        """See :meth:`History.points` (the newest ``limit`` runs of the window, if there are more)."""
        query = (
            select(runs.c.observed_at, runs.c.status, runs.c.reason, runs.c.latency_ms)
            .join(servers, servers.c.id == runs.c.server)
            .where(servers.c.server_id == server_id, runs.c.observed_at >= since)
            .order_by(runs.c.observed_at.desc())
            .limit(limit)
        )
        async with self.engine.connect() as db:
            rows = (await db.execute(query)).all()
        return [(utc(row.observed_at), row.status, row.reason, row.latency_ms) for row in reversed(rows)]

    async def window(self, server_id: str, since: datetime, limit: int = POINTS) -> Window:
        """See :meth:`History.window`: day by day from a midnight (:mod:`app.history.digests`),
        else summed up over the runs (:mod:`app.history.window`)."""
        by_day = await digests.window(self.engine, server_id, since, limit)
        if by_day is not None:
            return by_day
        async with self.engine.connect() as db:
            return await summarised(db, server_id, since, limit)

    async def history(self, server_id: str, since: datetime, limit: int = POINTS) -> HistoryRead | None:
        """See :meth:`History.history`."""
        return await reading.read(self.engine, server_id, since, limit)

    async def changes(self, server_id: str, limit: int = 50, before: datetime | None = None) -> list[Change]:
        """See :meth:`History.changes`."""
        async with self.engine.connect() as db:
            return await changelog.recent(db, server_id, limit, before)

    async def toolset(
        self, *, run_id: str | None = None, schema_fingerprint: str | None = None, server_id: str | None = None
    ) -> Toolset | None:
        """See :meth:`History.toolset` (``run_id``, ``schema_fingerprint`` or ``server_id`` is given)."""
        async with self.engine.connect() as db:
            if run_id is not None:
                return await lookups.by_run(db, run_id, server_id)
            if schema_fingerprint is not None:
                return await lookups.by_fingerprint(db, schema_fingerprint)
            assert server_id is not None
            return await lookups.latest(db, server_id)

    async def prune(self, before: datetime, batch: int = retention.PRUNE_BATCH) -> int:
        """See :meth:`History.prune` and :func:`app.history.retention.prune` (in batches; a tool
        set stays while a run, a change, a baseline or a server's latest state points to it)."""
        return await retention.prune(self.engine, before, batch)

    async def prunable(self, before: datetime) -> int:
        """See :meth:`History.prunable`."""
        async with self.engine.connect() as db:
            return int(await db.scalar(select(func.count()).select_from(runs).where(runs.c.observed_at < before)) or 0)

    async def ping(self) -> bool:
        """See :meth:`History.ping`."""
        try:
            async with self.engine.connect() as db:
                await db.scalar(select(1))
        except Exception:  # any driver or network fault means "does not answer"
            return False
        return True

    async def aclose(self) -> None:
        """See :meth:`History.aclose`."""
        await self.engine.dispose()
