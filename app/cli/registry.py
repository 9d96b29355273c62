"""``mcp-sonde registry sync|status``: the registry mirror (:mod:`app.registry`) by hand.

``sync`` runs one sync now (the same as the hourly ``registry_sync`` job: a full import the
first time, then ``updated_since``), bounded by the ``MCP_SONDE_REGISTRY_*`` settings, and prints
its report as JSON; ``status`` prints the last sync's report. The database is
``MCP_SONDE_DATABASE_URL``, else the embedded SQLite file (made or upgraded). Exit codes: 0 done
(a sync cut short by a bound is still done: its report says ``stopped``); 5 the database cannot be
reached or is not migrated.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

EXIT_DATABASE = 5


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``registry`` and its subcommands."""
    registry = commands.add_parser(
        "registry",
        help="the MCP registry mirror (sync, status)",
        description="Sync the MCP registry mirror now (MCP_SONDE_REGISTRY_URL), or show the last sync's report.",
        epilog="exit codes: 0 done; 5 the database cannot be reached or is not migrated",
    )
    actions = registry.add_subparsers(dest="action", required=True)
    actions.add_parser("sync", help="run one sync now and print its report (JSON)")
    actions.add_parser("status", help="print the last sync's report (JSON)")
    registry.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run one ``registry`` action."""
    import anyio

    from app.cli.check import settings_of
    from app.history.engine import database_url, safe_url

    settings = settings_of({})
    if settings is None:
        return EXIT_DATABASE
    url = database_url(settings)
    try:
        report: dict[str, Any] | None = anyio.run(_act, url, settings, args.action)
    except Exception as exc:  # any driver, schema or network fault: one line, no traceback
        sys.stderr.write(f"mcp-sonde registry: {safe_url(url)}: {type(exc).__name__}: {str(exc)[:300]}\n")
        return EXIT_DATABASE
    sys.stdout.write(json.dumps(report, indent=2) + "\n")
    return 0


async def _act(url: str, settings: Any, action: str) -> dict[str, Any] | None:
    from sqlalchemy import select

    from app.guard import SystemResolver
    from app.history.engine import open_engine
    from app.history.migrate import ensure_current
    from app.registry.jobs import RegistryMirror
    from app.registry.schema import registry_sync
    from app.registry.sync import registry_key

    await ensure_current(url, embedded=settings.database_url is None)
    engine = open_engine(url)
    try:
        if action == "sync":
            return (await RegistryMirror(engine, settings, SystemResolver(settings.dns_timeout_s)).run()).as_json()
        async with engine.connect() as db:
            key = registry_key(settings.registry_url)
            found: dict[str, Any] | None = await db.scalar(
                select(registry_sync.c.last_report).where(registry_sync.c.registry == key)
            )
        return found
    finally:
        await engine.dispose()
