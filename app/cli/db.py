"""``mcp-sonde db upgrade|current|prune``: the history database's schema (Alembic migrations)
and its retention.

The database is ``MCP_SONDE_DATABASE_URL``, else the embedded SQLite file of the data directory.
``prune`` deletes the runs older than ``--days`` (default ``MCP_SONDE_HISTORY_RETENTION_DAYS``)
as the service does every hour (:mod:`app.history.retention`), and says how many went;
``--dry-run`` only counts them. Exit codes: 0 done; 2 usage; 5 the database cannot be reached,
migrated or pruned (the reason is printed, the URL without its password).
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from app.cli.on_database import run_on_database

if TYPE_CHECKING:
    from app.settings import Settings


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``db`` and its subcommands."""
    db = commands.add_parser(
        "db",
        help="the history database's schema and retention (upgrade, current, prune)",
        description="Migrate or prune the history database (MCP_SONDE_DATABASE_URL, default SQLite in the data "
        "directory).",
        epilog="exit codes: 0 done; 2 usage; 5 the database cannot be reached, migrated or pruned",
    )
    actions = db.add_subparsers(dest="action", required=True)
    actions.add_parser("upgrade", help="bring the schema to the newest revision (creates it in an empty database)")
    actions.add_parser("current", help="print the revision the database is at, and the newest")
    prune = actions.add_parser("prune", help="delete the runs older than the retention, and what only they kept")
    prune.add_argument(
        "--days",
        type=_days,
        help="keep this many days of runs (1 to 3650; default MCP_SONDE_HISTORY_RETENTION_DAYS, 90)",
    )
    prune.add_argument("--dry-run", action="store_true", help="only count the runs that would be deleted")
    db.set_defaults(handler=run)


def _days(text: str) -> int:
    try:
        days = int(text)
    except ValueError:
        days = 0
    if not 1 <= days <= 3650:
        raise argparse.ArgumentTypeError("a whole number of days from 1 to 3650")
    return days


def run(args: argparse.Namespace) -> int:
    """Run one ``db`` action."""
    action, days_asked, dry_run = args.action, getattr(args, "days", None), getattr(args, "dry_run", False)

    async def act(url: str, settings: Settings) -> str:
        from app.db import migrate
        from app.db.engine import safe_url
        from app.directory.rows import MIGRATION_STEPS

        if action == "upgrade":
            before, after = await migrate.upgrade(url, steps=MIGRATION_STEPS)
            said = "already at" if before == after else f"upgraded from {before or 'an empty database'} to"
            return f"{safe_url(url)}: {said} revision {after}\n"
        if action == "prune":
            days = days_asked or settings.history_retention_days
            cutoff = datetime.now(UTC) - timedelta(days=days)
            counted = await _prune(url, cutoff, dry_run)
            said = "would delete" if dry_run else "deleted"
            return (f"{safe_url(url)}: {said} {counted} runs observed before {cutoff:%Y-%m-%dT%H:%M:%SZ} "
                    f"(older than {days} days)\n")  # fmt: skip
        found = await migrate.current(url)
        return f"{safe_url(url)}: revision {found or '(none)'}; newest {migrate.head()}\n"

    return run_on_database("db", act)


async def _prune(url: str, before: datetime, dry_run: bool) -> int:
    from app.db.migrate import ensure_current
    from app.history.store import SqlHistory

    await ensure_current(url, embedded=False)  # (an empty or older database: SchemaOutdated, naming db upgrade)
    history = SqlHistory.open(url)
    try:
        return await (history.prunable(before) if dry_run else history.prune(before))
    finally:
        await history.aclose()
