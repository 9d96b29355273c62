"""``mcp-sonde optout add|remove|list``: the opt-out list (:mod:`app.optout`) in the database.

The database is ``MCP_SONDE_DATABASE_URL``, else the embedded SQLite file of the data directory
(its schema must be current: ``mcp-sonde db upgrade``). An item is a host (covering its
subdomains) or a URL (that endpoint only). Exit codes: 0 done; 2 usage or an item that is
neither (``optout_invalid``); 5 the database cannot be reached or is not migrated.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from app.cli.on_database import current_database, run_on_database

if TYPE_CHECKING:
    from app.settings import Settings


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``optout`` and its subcommands."""
    optout = commands.add_parser(
        "optout",
        help="hosts and URLs that sweeps never contact (add, remove, list)",
        description="Manage the opt-out list: a host covers its subdomains; a URL covers that endpoint only.",
        epilog="exit codes: 0 done; 2 usage or not a host or URL; 5 the database cannot be reached or is not migrated",
    )
    actions = optout.add_subparsers(dest="action", required=True)
    for name, said in (("add", "opt a host or URL out"), ("remove", "take a host or URL off the list")):
        action = actions.add_parser(name, help=said)
        action.add_argument("item", help="a host name (example.com) or a URL (https://example.com/mcp)")
    actions.add_parser("list", help="print the list, one item a line: kind, value, when added")
    optout.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run one ``optout`` action."""
    from app.optout import OptOutInvalid

    action, item = args.action, getattr(args, "item", "")

    async def act(url: str, settings: Settings) -> str:
        from app.optout import OptOutList

        async with current_database(url, settings) as engine:
            listed = OptOutList(engine)
            if action == "add":
                made, new = await listed.add(item)
                return f"{'added' if new else 'already listed'}: {made.kind} {made.value}\n"
            if action == "remove":
                return "removed\n" if await listed.remove(item) else "not listed\n"
            return "".join(f"{i.kind}\t{i.value}\t{i.added_at:%Y-%m-%dT%H:%M:%SZ}\n" for i in await listed.items())

    return run_on_database("optout", act, usage=(OptOutInvalid,))
