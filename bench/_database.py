"""The bench scripts' own PostgreSQL databases: made anew before a run (never ``sonde_bench``'s
of :mod:`bench.history`, which ``--keep`` reuses)."""

from __future__ import annotations

import asyncpg

ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"


async def admin(sql: str, server: str = ADMIN) -> None:
    """Run one statement on the server's ``postgres`` database (CREATE/DROP DATABASE)."""
    connection = await asyncpg.connect(server, timeout=5)
    try:
        await connection.execute(sql)
    finally:
        await connection.close()


async def made_anew(name: str) -> None:
    """Drop database ``name`` if it is there, and make it empty."""
    await admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    await admin(f'CREATE DATABASE "{name}"')
