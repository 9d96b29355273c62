"""``mcp-sonde db upgrade|current|prune`` as a process, on SQLite and PostgreSQL: the schema
made current, the runs past the retention counted (``--dry-run``) and deleted, and the exit
codes of a database without a schema, one that does not answer, and a bad ``--days``."""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import sys
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from app.checking.services import open_history
from app.db import migrate
from app.db.tables.history import runs
from tests.history.test_store import count
from tests.history.test_store import run as sample_run


def db(url: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = os.environ | {"MCP_SONDE_DATABASE_URL": url} | env
    return subprocess.run(
        [sys.executable, "-m", "app", "db", *args], capture_output=True, text=True, timeout=60, check=False,
        env=environment,
    )  # fmt: skip


def seed(url: str, ages_days: list[float]) -> None:
    """One run of each age (days before now)."""

    async def write() -> None:
        store = open_history(url)
        now = datetime.now(UTC)
        try:
            for n, age in enumerate(ages_days):
                await store.record(replace(sample_run(n), observed_at=now - timedelta(days=age)))
        finally:
            await store.aclose()

    asyncio.run(write())


def stored_runs(url: str) -> int:
    async def read() -> int:
        store = open_history(url)
        try:
            return await count(store, runs)
        finally:
            await store.aclose()

    return asyncio.run(read())


def test_upgrade_then_current(database_url: str) -> None:
    upgraded = db(database_url, "upgrade")
    assert upgraded.returncode == 0, upgraded.stderr
    assert f"upgraded from an empty database to revision {migrate.head()}" in upgraded.stdout
    current = db(database_url, "current")
    assert current.returncode == 0 and f"revision {migrate.head()}; newest {migrate.head()}" in current.stdout
    again = db(database_url, "upgrade")
    assert again.returncode == 0 and "already at revision" in again.stdout


def test_prune_counts_with_dry_run_then_deletes(database_url: str) -> None:
    assert db(database_url, "upgrade").returncode == 0
    seed(database_url, [200, 120, 95, 30, 1])
    dry = db(database_url, "prune", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert re.search(r": would delete 3 runs observed before \S+Z \(older than 90 days\)$", dry.stdout.strip())
    assert stored_runs(database_url) == 5  # counted, not deleted
    pruned = db(database_url, "prune")
    assert pruned.returncode == 0 and ": deleted 3 runs" in pruned.stdout
    assert stored_runs(database_url) == 2
    shorter = db(database_url, "prune", "--days", "7")
    assert shorter.returncode == 0 and ": deleted 1 runs" in shorter.stdout and "older than 7 days" in shorter.stdout
    assert db(database_url, "prune").stdout.count("deleted 0 runs") == 1


def test_prune_follows_the_retention_setting(database_url: str) -> None:
    assert db(database_url, "upgrade").returncode == 0
    seed(database_url, [40, 20, 1])
    pruned = db(database_url, "prune", MCP_SONDE_HISTORY_RETENTION_DAYS="30")
    assert pruned.returncode == 0 and ": deleted 1 runs" in pruned.stdout and "older than 30 days" in pruned.stdout


def test_prune_of_a_database_without_the_schema_names_db_upgrade(database_url: str) -> None:
    pruned = db(database_url, "prune")
    assert pruned.returncode == 5
    assert "mcp-sonde db upgrade" in pruned.stderr and "Traceback" not in pruned.stderr


def test_a_database_that_does_not_answer_is_exit_5_without_its_password() -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    url = f"postgresql+asyncpg://sonde:hunter2@127.0.0.1:{port}/history"
    for args in (("prune",), ("prune", "--dry-run"), ("current",)):
        answer = db(url, *args)
        assert answer.returncode == 5, (args, answer.stderr)
        assert "hunter2" not in answer.stderr + answer.stdout and "***" in answer.stderr
        assert len(answer.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("days", ["0", "3651", "ten", "-1"])
def test_a_bad_days_is_a_usage_error(days: str) -> None:
    answer = db("sqlite+aiosqlite:///unused.sqlite3", "prune", "--days", days)
    assert answer.returncode == 2 and "--days" in answer.stderr


def test_serve_on_a_database_without_the_schema_exits_22_with_one_line_and_no_traceback(database_url: str) -> None:
    from app.cli.codes import SERVE_EXIT_STARTUP
    from tests.servers.ports import free_port
    from tests.servers.sonde import finish, launch

    code, _out, err = finish(launch("serve", "--port", str(free_port()), env={"MCP_SONDE_DATABASE_URL": database_url}))
    assert code == SERVE_EXIT_STARTUP, err
    assert b"mcp-sonde db upgrade" in err and b"Traceback" not in err
