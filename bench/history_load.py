"""Bulk loading of :mod:`bench.history_data` into the history schema, for ``bench/history.py``.

The schema is always made by the store's own migrations (:func:`app.db.migrate.upgrade`),
so a database kept from an earlier run gets the newer migrations too. Rows go straight into the
tables, never through ``SqlHistory.record`` (10 million of those would take hours):

- **PostgreSQL** (a database of its own, named by the caller: the run's own, or the kept one,
  which is made when missing and never dropped here): the foreign keys, the unique
  constraint and the secondary indexes of ``runs`` are dropped first (their definitions read from
  the catalogue and kept in ``bench_generated``), the runs go in by binary ``COPY`` in batches,
  then the other tables, then the constraints and indexes are made again as they were, the
  sequences moved past the ids, and ``VACUUM ANALYZE`` run (the visibility map and statistics a
  live database has from autovacuum). Each step is noted in ``bench_generated``: a load that
  stopped is resumed where it stopped (the runs after the highest id stored), a finished one is
  reused as it is with ``keep``.
- **SQLite** (a file): the secondary indexes of ``runs`` dropped and made again around batched
  inserts through SQLAlchemy Core (the same bind processing as the store), synchronous off while
  loading. Not resumed (a million runs take a minute or two); no ``ANALYZE``, as the service runs
  none.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
from sqlalchemy import Table, create_engine, text

from app.db import migrate
from app.db.tables.history import changes, runs, server_days, servers, toolsets
from bench._database import ADMIN
from bench.history_data import (
    CHANGE_COLUMNS,
    DAY_COLUMNS,
    RUN_COLUMNS,
    SERVER_COLUMNS,
    TOOLSET_COLUMNS,
    Made,
    Plan,
    generate,
    pools,
)

_SERIAL = ("servers", "toolsets", "runs", "changes")


@dataclass(frozen=True)
class Prepared:
    """A database ready to bench: its SQLAlchemy URL, whether it was reused, what making it took."""

    url: str
    reused: bool
    seconds: float
    now: datetime


def _progress(started: float, done: int, total: int) -> None:
    elapsed = time.monotonic() - started
    print(f"    {done:>11,} / {total:,} runs, {elapsed:6.0f} s, {done / max(elapsed, 1e-9):8,.0f} runs/s", flush=True)


async def _steps(db: asyncpg.Connection) -> dict[str, Any]:
    await db.execute(
        "CREATE TABLE IF NOT EXISTS bench_generated (step text PRIMARY KEY, detail text NOT NULL,"
        " seconds double precision NOT NULL, done_at timestamptz NOT NULL DEFAULT now())"
    )
    return {row["step"]: row for row in await db.fetch("SELECT step, detail, seconds FROM bench_generated")}


async def _note(db: asyncpg.Connection, step: str, detail: object, seconds: float) -> None:
    await db.execute(
        "INSERT INTO bench_generated (step, detail, seconds) VALUES ($1, $2, $3)"
        " ON CONFLICT (step) DO UPDATE SET detail = excluded.detail, seconds = excluded.seconds, done_at = now()",
        step, json.dumps(detail), seconds,
    )  # fmt: skip


async def _loosen(db: asyncpg.Connection) -> list[list[str]]:
    """Drop the foreign keys and the secondary indexes of ``runs``; ``[kind, name, statement]`` to make them again."""
    restore: list[list[str]] = []
    for name, sql in await db.fetch(
        "SELECT indexrelid::regclass::text, pg_get_indexdef(indexrelid) FROM pg_index"
        " WHERE indrelid = 'runs'::regclass AND NOT indisprimary"
        " AND NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conindid = indexrelid)"
    ):
        restore.append(["index", name, sql])
    for table, name, definition in await db.fetch(
        "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint"
        " WHERE connamespace = 'public'::regnamespace"
        " AND (contype = 'f' OR (contype = 'u' AND conrelid = 'runs'::regclass)) ORDER BY contype DESC"
    ):
        restore.append(["constraint", name, f"ALTER TABLE {table} ADD CONSTRAINT {name} {definition}"])
    async with db.transaction():
        for kind, name, statement in reversed(restore):
            if kind == "index":
                await db.execute(f"DROP INDEX {name}")
            else:
                await db.execute(f"ALTER TABLE {statement.split()[2]} DROP CONSTRAINT {name}")
        await _note(db, "loosened", restore, 0.0)
    return restore


async def _tighten(db: asyncpg.Connection, restore: list[list[str]]) -> None:
    """Make the indexes (first: unique ones back the foreign keys) and constraints again, skipping those present."""
    await db.execute("SET maintenance_work_mem = '1GB'")
    await db.execute("SET max_parallel_maintenance_workers = 2")
    for kind, name, statement in sorted(restore, key=lambda item: item[0] != "index"):
        catalogue = "pg_class WHERE relname" if kind == "index" else "pg_constraint WHERE conname"
        if await db.fetchval(f"SELECT 1 FROM {catalogue} = $1", name):
            continue
        started = time.monotonic()
        await db.execute(statement)
        print(f"    {name}: {time.monotonic() - started:.0f} s", flush=True)


async def _copy(db: asyncpg.Connection, table: str, columns: tuple[str, ...], rows: list[tuple[Any, ...]]) -> None:
    for first in range(0, len(rows), 50_000):
        await db.copy_records_to_table(table, records=rows[first : first + 50_000], columns=list(columns))


async def prepare_postgres(plan: Plan, keep: bool, name: str, admin: str = ADMIN) -> Prepared:
    """The PostgreSQL database ``name``, made and filled (with ``keep``, reused or resumed when it exists);
    see the module docs. Without ``keep``, ``name`` must be a new database of this run's own (it is
    made, never dropped first); no database is ever dropped here."""
    server = await asyncpg.connect(admin, timeout=5)
    try:
        exists = await server.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", name)
        if exists and not keep:
            raise SystemExit(f"database {name} exists already: a run makes a new one of its own")
        if not exists:
            await server.execute(f'CREATE DATABASE "{name}"')
    finally:
        await server.close()
    plain = admin.rsplit("/", 1)[0] + f"/{name}"
    url = plain.replace("postgresql://", "postgresql+asyncpg://")
    await migrate.upgrade(url)
    db = await asyncpg.connect(plain)
    try:
        steps = await _steps(db)
        if "plan" in steps:
            stored = json.loads(steps["plan"]["detail"])
            if stored["plan"] != plan.describe():
                raise SystemExit(f"{name} holds another plan ({stored['plan']}): drop it or run without --keep")
            now = datetime.fromisoformat(stored["now"])
        else:
            now = datetime.now(UTC).replace(microsecond=0)
            await _note(db, "plan", {"plan": plan.describe(), "now": now.isoformat()}, 0.0)
        if "complete" in steps:
            return Prepared(url, True, float(steps["complete"]["seconds"]), now)
        await _fill(db, plan, now, steps)
        steps = await _steps(db)
        total = sum(float(row["seconds"]) for row in steps.values())
        await _note(db, "complete", {}, total)
        return Prepared(url, False, total, now)
    finally:
        await db.close()


async def _fill(db: asyncpg.Connection, plan: Plan, now: datetime, steps: dict[str, Any]) -> None:
    started = time.monotonic()
    restore = json.loads(steps["loosened"]["detail"]) if "loosened" in steps else await _loosen(db)
    blobs, made = pools(plan.seed), Made()
    held = int(await db.fetchval("SELECT coalesce(max(id), 0) FROM runs"))
    if held:
        print(f"    resuming after run {held:,}", flush=True)
    loaded = 0
    for rows in generate(plan, blobs, now, made):
        if rows[-1][0] > held:
            fresh = rows if rows[0][0] > held else [row for row in rows if row[0] > held]
            await db.copy_records_to_table("runs", records=fresh, columns=list(RUN_COLUMNS))
        loaded = rows[-1][0]
        if loaded % 1_000_000 == 0:
            _progress(started, loaded, plan.runs)
    await _note(db, "runs", {"runs": loaded}, time.monotonic() - started)
    started = time.monotonic()
    async with db.transaction():
        for table in ("changes", "server_days", "toolsets", "servers"):
            await db.execute(f"DELETE FROM {table}")
        server_rows = [(*row[:4], json.dumps(row[4]), *row[5:]) for row in made.servers]
        await _copy(db, "servers", SERVER_COLUMNS, server_rows)
        await _copy(db, "toolsets", TOOLSET_COLUMNS, made.toolsets)
        await _copy(db, "server_days", DAY_COLUMNS, made.days)
        await _copy(db, "changes", CHANGE_COLUMNS, made.changes)
        for table in _SERIAL:
            await db.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))")
        await _note(db, "tables", {"servers": len(made.servers), "toolsets": len(made.toolsets),
                                   "server_days": len(made.days), "changes": len(made.changes)},
                    time.monotonic() - started)  # fmt: skip
    print(f"    servers, toolsets, server_days, changes: {time.monotonic() - started:.0f} s", flush=True)
    started = time.monotonic()
    await _tighten(db, restore)
    await _note(db, "tightened", {}, time.monotonic() - started)
    started = time.monotonic()
    await db.execute("VACUUM (ANALYZE)")
    print(f"    VACUUM ANALYZE: {time.monotonic() - started:.0f} s", flush=True)
    await _note(db, "vacuumed", {}, time.monotonic() - started)


async def postgres_sizes(url: str) -> list[tuple[str, int]]:
    """``(what, bytes)``: the database, then each table with its TOAST and its indexes."""
    db = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        out = [("database", int(await db.fetchval("SELECT pg_database_size(current_database())")))]
        for table in ("runs", "toolsets", "server_days", "changes", "servers"):
            heap, total, indexes = await db.fetchrow(
                "SELECT pg_relation_size($1::regclass), pg_total_relation_size($1::regclass),"
                " pg_indexes_size($1::regclass)", table,
            )  # fmt: skip
            out.append((f"{table} (table {heap / 2**30:.2f} GiB, TOAST {(total - heap - indexes) / 2**30:.2f} GiB,"
                        f" indexes {indexes / 2**30:.2f} GiB)", int(total)))  # fmt: skip
        return out
    finally:
        await db.close()


def _sqlite_complete(path: Path, plan: Plan) -> tuple[float, datetime] | None:
    if not path.exists():
        return None
    engine = create_engine(f"sqlite:///{path}")
    try:
        with engine.connect() as db:
            row = db.execute(text("SELECT detail, seconds FROM bench_generated WHERE step = 'complete'")).first()
    except Exception:  # no such table: an unfinished load
        return None
    finally:
        engine.dispose()
    if row is None or json.loads(row[0])["plan"] != plan.describe():
        return None
    return float(row[1]), datetime.fromisoformat(json.loads(row[0])["now"])


async def prepare_sqlite(plan: Plan, path: Path, keep: bool) -> Prepared:
    """The SQLite file at ``path``, made (or, with ``keep``, reused when complete); see the module docs."""
    url = f"sqlite+aiosqlite:///{path}"
    if keep and (done := _sqlite_complete(path, plan)) is not None:
        await migrate.upgrade(url)
        return Prepared(url, True, done[0], done[1])
    for stale in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        stale.unlink(missing_ok=True)
    started = time.monotonic()
    await migrate.upgrade(url)
    now = datetime.now(UTC).replace(microsecond=0)
    engine = create_engine(f"sqlite:///{path}")
    blobs, made = pools(plan.seed), Made()
    try:
        with engine.connect() as db:
            db.execute(text("PRAGMA journal_mode=WAL"))
            db.execute(text("PRAGMA synchronous=OFF"))
            found = db.execute(text("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'runs'"
                                    " AND sql IS NOT NULL")).all()  # fmt: skip
            for name, _ in found:
                db.execute(text(f"DROP INDEX {name}"))
            db.commit()
            tables: list[tuple[Table, tuple[str, ...], list[tuple[Any, ...]]]] = [
                (servers, SERVER_COLUMNS, made.servers), (toolsets, TOOLSET_COLUMNS, made.toolsets),
                (server_days, DAY_COLUMNS, made.days), (changes, CHANGE_COLUMNS, made.changes),
            ]  # fmt: skip
            for rows in generate(plan, blobs, now, made, batch=20_000):
                db.execute(runs.insert(), [dict(zip(RUN_COLUMNS, row, strict=True)) for row in rows])
                db.commit()
                if rows[-1][0] % 200_000 == 0:
                    _progress(started, rows[-1][0], plan.runs)
            for table, columns, table_rows in tables:
                for first in range(0, len(table_rows), 20_000):
                    chunk = table_rows[first : first + 20_000]
                    db.execute(table.insert(), [dict(zip(columns, row, strict=True)) for row in chunk])
            for _, sql in found:
                db.execute(text(sql))
            seconds = time.monotonic() - started
            db.execute(text("CREATE TABLE bench_generated (step TEXT PRIMARY KEY, detail TEXT, seconds REAL)"))
            detail = json.dumps({"plan": plan.describe(), "now": now.isoformat()})
            db.execute(text("INSERT INTO bench_generated VALUES ('complete', :d, :s)"), {"d": detail, "s": seconds})
            db.commit()
            db.execute(text("PRAGMA wal_checkpoint(TRUNCATE)"))
    finally:
        engine.dispose()
    return Prepared(url, False, seconds, now)
