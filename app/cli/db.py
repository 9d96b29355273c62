"""``mcp-sonde db upgrade|current``: the history database's schema (Alembic migrations).

The database is ``MCP_SONDE_DATABASE_URL``, else the embedded SQLite file of the data directory.
Exit codes: 0 done; 2 usage; 5 the database cannot be reached or migrated (the reason is
printed, the URL without its password).
"""

from __future__ import annotations

import argparse
import sys

EXIT_DATABASE = 5


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``db`` and its subcommands."""
    db = commands.add_parser(
        "db",
        help="the history database's schema (upgrade, current)",
        description="Migrate the history database (MCP_SONDE_DATABASE_URL, default SQLite in the data directory).",
        epilog="exit codes: 0 done; 2 usage; 5 the database cannot be reached or migrated",
    )
    actions = db.add_subparsers(dest="action", required=True)
    actions.add_parser("upgrade", help="bring the schema to the newest revision (creates it in an empty database)")
    actions.add_parser("current", help="print the revision the database is at, and the newest")
    db.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run one ``db`` action."""
    import anyio

    from app.cli.check import settings_of
    from app.history import migrate
    from app.history.engine import database_url, safe_url

    settings = settings_of({})
    if settings is None:
        return EXIT_DATABASE
    url = database_url(settings)
    try:
        if args.action == "upgrade":
            before, after = anyio.run(migrate.upgrade, url)
            said = "already at" if before == after else f"upgraded from {before or 'an empty database'} to"
            sys.stdout.write(f"{safe_url(url)}: {said} revision {after}\n")
        else:
            found = anyio.run(migrate.current, url)
            sys.stdout.write(f"{safe_url(url)}: revision {found or '(none)'}; newest {migrate.head()}\n")
    except Exception as exc:  # any driver, network or migration fault: one line, no traceback
        sys.stderr.write(f"mcp-sonde db: {safe_url(url)}: {type(exc).__name__}: {str(exc)[:300]}\n")
        return EXIT_DATABASE
    return 0
