"""The bench scripts' own PostgreSQL databases, one per run.

A run makes a database whose name carries its process id and a random part, and drops that one
alone when it ends: two runs at once never share one, and ``DROP ... WITH (FORCE)`` is only ever
given a name this run made (never a fixed name another run may be using).
"""

from __future__ import annotations

import os
import secrets

import asyncpg

ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"


async def admin(sql: str, server: str = ADMIN) -> None:
    """Run one statement on the server's ``postgres`` database (CREATE/DROP DATABASE)."""
    connection = await asyncpg.connect(server, timeout=5)
    try:
        await connection.execute(sql)
    finally:
        await connection.close()


def run_name(prefix: str) -> str:
    """A database name of this run alone: ``prefix``, the process id and six random hex digits."""
    return f"{prefix}_{os.getpid()}_{secrets.token_hex(3)}"


async def made(name: str) -> None:
    """Make the empty database ``name`` (fails when it exists: a run's name is its own)."""
    await admin(f'CREATE DATABASE "{name}"')


async def dropped(name: str) -> None:
    """Drop this run's database ``name`` (with whatever sessions it still has)."""
    await admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
