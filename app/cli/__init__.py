"""The ``mcp-sonde`` command line.

``mcp-sonde check URL [--light] [--json] [--tools] [--header 'N: V'] [--timeout S]
[--allow-private] [--ca-bundle PEM]`` probes one endpoint and exits with the code of its
status class (:data:`EXIT_CODES`, see :mod:`app.cli.check`); a URL the target guard refuses
exits with 3 and nothing is connected to.

``mcp-sonde serve [--host H] [--port P] [--workers N] [--allow-private]`` runs the HTTP API
under uvicorn (settings from ``MCP_SONDE_*`` and ``REDIS_URL``; see :mod:`app.cli.serve`) and
exits with one of its own codes (:data:`app.cli.codes.SERVE_EXIT_HELP`).

``mcp-sonde verify ENVELOPE [--keys FILE|URL]`` checks a signed result offline
(:mod:`app.cli.verify`); ``mcp-sonde keys new|list|revoke|retire`` manages the signing keys
(:mod:`app.cli.keys`); ``mcp-sonde db upgrade|current`` migrates the history database
(:mod:`app.cli.db`); ``mcp-sonde optout add|remove|list`` manages the hosts and URLs sweeps never
contact (:mod:`app.cli.optout`); ``mcp-sonde registry sync|status`` syncs the MCP registry mirror
now or shows the last sync's report (:mod:`app.cli.registry`); ``mcp-sonde dev-chain`` runs an
offline payment chain and x402 facilitator for development (:mod:`app.cli.devchain`).

``mcp-sonde worker [--concurrency N]`` runs scheduled jobs from the Redis job queue
(:mod:`app.cli.worker`); ``mcp-sonde scheduler`` enqueues due work, one active at a time
(:mod:`app.cli.scheduler`). Both need ``REDIS_URL`` and the history database
(:mod:`app.cli.jobs`); without Redis, ``serve`` runs scheduled work in its own process.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence

from app import __version__
from app.cli.codes import (
    EXIT_CODES,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_REFUSED,
    EXIT_USAGE,
    SERVE_EXIT_HELP,
    SERVE_EXIT_SETTINGS,
)
from app.logs import configure_cli_logging

__all__ = ["EXIT_CODES", "EXIT_INTERNAL", "EXIT_INTERRUPTED", "EXIT_REFUSED", "EXIT_USAGE", "build_parser", "main"]


def _serve(args: argparse.Namespace) -> int:
    from app.cli.check import settings_of

    overrides = {
        name: value
        for name, value in (("host", args.host), ("port", args.port), ("workers", args.workers))
        if value is not None
    }
    if args.allow_private:
        overrides["allow_private"] = True
    # Worker processes build their own settings from the environment: pass the flags that way.
    for name, value in overrides.items():
        os.environ[f"MCP_SONDE_{name.upper()}"] = str(value).lower() if isinstance(value, bool) else str(value)
    settings = settings_of({})
    if settings is None:
        return SERVE_EXIT_SETTINGS
    if settings.workers > 1 and not settings.redis_url:
        sys.stderr.write("mcp-sonde: the embedded store is per process; set REDIS_URL to run more than one worker\n")
        return SERVE_EXIT_SETTINGS
    from app.cli.serve import serve

    return serve(settings)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (subcommands ``check`` and, with the service, ``serve``)."""
    parser = argparse.ArgumentParser(prog="mcp-sonde", description="Live checks of remote MCP servers.")
    parser.add_argument("--version", action="version", version=f"mcp-sonde {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    from app.cli.check import add_parser as add_check  # the probe's imports: inside main's Ctrl-C guard

    add_check(commands)
    from app.cli.db import add_parser as add_db
    from app.cli.keys import add_parser as add_keys
    from app.cli.optout import add_parser as add_optout
    from app.cli.registry import add_parser as add_registry
    from app.cli.verify import add_parser as add_verify

    add_verify(commands)
    add_keys(commands)
    add_db(commands)
    from app.cli.scheduler import add_parser as add_scheduler
    from app.cli.worker import add_parser as add_worker

    add_worker(commands)
    add_scheduler(commands)
    add_optout(commands)
    add_registry(commands)
    from app.cli.devchain import add_parser as add_devchain

    add_devchain(commands)
    serve = commands.add_parser(
        "serve",
        help="run the HTTP API (settings: MCP_SONDE_* and REDIS_URL)",
        description="Run the HTTP API under uvicorn (settings: MCP_SONDE_* and REDIS_URL; flags override them).",
        epilog=SERVE_EXIT_HELP,
    )
    serve.add_argument("--host", help="listen address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="listen port (default 8000)")
    serve.add_argument("--workers", type=int, help="worker processes (more than 1 needs REDIS_URL)")
    serve.add_argument(
        "--allow-private",
        action="store_true",
        help="development only: checks may reach http, loopback and private addresses",
    )
    serve.set_defaults(handler=_serve)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mcp-sonde`` console script; returns the exit code."""
    given = list(sys.argv[1:] if argv is None else argv)
    early = None
    if given[:1] == ["check"]:  # (its target is dialled while the rest is imported: app.cli.predial)
        from app.cli.predial import start

        early = start(given[1:])
    configure_cli_logging()
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")  # never fail on output, whatever a server sent
    try:
        args = build_parser().parse_args(given)
        args.predial = early
        code: int = args.handler(args)
    except KeyboardInterrupt:  # Ctrl-C outside the probe (while importing, say): no traceback
        code = EXIT_INTERRUPTED
        sys.stderr.write("interrupted\n")
    if code == EXIT_INTERRUPTED:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the exit code stands: no second Ctrl-C while exiting
    return code


if __name__ == "__main__":
    raise SystemExit(main())
