"""``mcp-sonde optout add|remove|list``: the opt-out list (:mod:`app.optout`) in the database.

The database is ``MCP_SONDE_DATABASE_URL``, else the embedded SQLite file of the data directory
(its schema must be current: ``mcp-sonde db upgrade``). An item is a host (covering its
subdomains) or a URL (that endpoint only). Exit codes: 0 done; 2 usage or an item that is
neither (``optout_invalid``); 5 the database cannot be reached or is not migrated.
"""

from __future__ import annotations

import argparse
import sys

from app.cli.codes import EXIT_USAGE

EXIT_DATABASE = 5


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
    import anyio

    from app.cli.check import settings_of
    from app.history.engine import database_url, safe_url
    from app.history.migrate import SchemaOutdated
    from app.optout import OptOutInvalid

    settings = settings_of({})
    if settings is None:
        return EXIT_DATABASE
    url = database_url(settings)
    try:
        said: str = anyio.run(_act, url, settings.database_url is None, args.action, getattr(args, "item", ""))
    except SchemaOutdated as exc:
        sys.stderr.write(f"mcp-sonde optout: {safe_url(url)}: {exc.message}\n")
        return EXIT_DATABASE
    except OptOutInvalid as exc:
        sys.stderr.write(f"mcp-sonde optout: {exc.reason}: {exc.message}\n")
        return EXIT_USAGE
    except Exception as exc:  # any driver or schema fault: one line, no traceback
        sys.stderr.write(f"mcp-sonde optout: {safe_url(url)}: {type(exc).__name__}: {str(exc)[:300]}\n")
        return EXIT_DATABASE
    sys.stdout.write(said)
    return 0


async def _act(url: str, embedded: bool, action: str, item: str) -> str:
    from app.history.engine import open_engine
    from app.history.migrate import ensure_current
    from app.optout import OptOutList

    await ensure_current(url, embedded=embedded)  # (the embedded file: made or upgraded)
    engine = open_engine(url)
    try:
        listed = OptOutList(engine)
        if action == "add":
            made, new = await listed.add(item)
            return f"{'added' if new else 'already listed'}: {made.kind} {made.value}\n"
        if action == "remove":
            gone = await listed.remove(item)
            return "removed\n" if gone else "not listed\n"
        return "".join(f"{i.kind}\t{i.value}\t{i.added_at:%Y-%m-%dT%H:%M:%SZ}\n" for i in await listed.items())
    finally:
        await engine.dispose()
