"""``mcp-sonde registry sync|status``: the registry mirror (:mod:`app.registry`) by hand.

``sync`` runs one sync now (the same as the hourly ``registry_sync`` job: a full import the
first time, then ``updated_since``), bounded by the ``MCP_SONDE_REGISTRY_*`` settings, and prints
its report as JSON; ``status`` prints the last sync's report. The database is
``MCP_SONDE_DATABASE_URL``, else the embedded SQLite file (made or upgraded). Exit codes: 0 done
(``sync``: complete); 6 a sync that stopped short (the registry did not answer, an answer was
refused, or a bound was reached: its report's ``stopped`` says which; what was read is kept, and
the next sync reads the same span again), so a scheduler can tell; 2 no registry configured;
5 the database cannot be reached or is not migrated.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from app.cli.on_database import current_database, run_on_database

#: ``registry sync``: the sync did not complete (its report says why).
EXIT_STOPPED_SHORT = 6

if TYPE_CHECKING:
    from app.settings import Settings


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``registry`` and its subcommands."""
    registry = commands.add_parser(
        "registry",
        help="the MCP registry mirror (sync, status)",
        description="Sync the MCP registry mirror now (MCP_SONDE_REGISTRY_URL), or show the last sync's report.",
        epilog="exit codes: 0 done (sync: complete); 6 the sync stopped short (its report's stopped says why); "
        "2 no registry configured (MCP_SONDE_REGISTRY_URL); 5 the database cannot be reached or is not migrated",
    )
    actions = registry.add_subparsers(dest="action", required=True)
    actions.add_parser("sync", help="run one sync now and print its report (JSON)")
    actions.add_parser("status", help="print the last sync's report (JSON)")
    registry.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run one ``registry`` action."""
    from app.registry.jobs import RegistryNotConfigured

    action = args.action
    stopped_short = False

    async def act(url: str, settings: Settings) -> str:
        nonlocal stopped_short
        from sqlalchemy import select

        from app.db.tables.registry import registry_sync
        from app.guard import SystemResolver
        from app.registry.jobs import RegistryMirror, configured_url
        from app.registry.sync import registry_key

        async with current_database(url, settings) as engine:
            report: dict[str, Any] | None
            if action == "sync":
                report = (
                    await RegistryMirror(engine, settings, SystemResolver(settings.dns_timeout_s)).run()
                ).as_json()
                stopped_short = report["stopped"] != "complete"
            else:
                async with engine.connect() as db:
                    query = select(registry_sync.c.last_report).where(
                        registry_sync.c.registry == registry_key(configured_url(settings))
                    )
                    report = await db.scalar(query)
        return json.dumps(report, indent=2) + "\n"

    code = run_on_database("registry", act, usage=(RegistryNotConfigured,))
    return EXIT_STOPPED_SHORT if code == 0 and stopped_short else code
