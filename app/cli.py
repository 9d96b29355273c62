"""The ``mcp-sonde`` command line.

``mcp-sonde check URL [--light] [--json] [--allow-private] [--ca-bundle PEM]`` probes one
endpoint and exits with the code of its status class (:data:`EXIT_CODES`); a URL the target
guard refuses exits with 3 and nothing is connected to.

``mcp-sonde serve [--host H] [--port P] [--workers N] [--allow-private]`` runs the HTTP API
under uvicorn (settings from ``MCP_SONDE_*`` and ``REDIS_URL``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Final, TextIO
from urllib.parse import urlsplit

import anyio
from pydantic import ValidationError

from app import __version__
from app.errors import SondeError, TargetRefused
from app.logs import SERVICE_LOGGING, configure_cli_logging
from app.probe import ProbeResult, probe
from app.settings import Settings

#: Process exit code per status class; 2 is a usage error, 3 a refused URL, 1 an internal error.
EXIT_CODES: Final[dict[str, int]] = {
    "ok": 0,
    "auth": 10,
    "not_found": 11,
    "client_error": 12,
    "server_error": 13,
    "redirect": 14,
    "not_mcp": 15,
    "timeout": 16,
    "tls": 17,
    "dns": 18,
    "unreachable": 19,
}
EXIT_REFUSED: Final = 3
EXIT_USAGE: Final = 2
EXIT_INTERNAL: Final = 1
_LOCAL_HINT_REASONS: Final = frozenset(
    {"scheme_not_https", "port_not_allowed", "host_ip_literal", "address_not_public"}
)


def _looks_local(reason: str, url: str) -> bool:
    """Whether a refusal is likely a server on this machine (worth the --allow-private hint)."""
    if reason in _LOCAL_HINT_REASONS:
        return True
    host = (urlsplit(url).hostname or "") if reason == "host_not_public_name" else ""
    return host == "localhost" or host.endswith(".localhost")


def _summary(result: ProbeResult, out: TextIO) -> None:
    lines = [f"{result.url}", f"  status     {result.status} ({result.reason})"]
    if result.failed_step:
        lines.append(f"  failed at  {result.failed_step}")
    if result.detail:
        lines.append(f"  detail     {result.detail}")
    if result.server:
        title = f" ({result.server.title})" if result.server.title and result.server.title != result.server.name else ""
        lines.append(f"  server     {result.server.name or '?'} {result.server.version or ''}{title}".rstrip())
    if result.protocol_version:
        lines.append(f"  protocol   {result.protocol_version} ({result.era}, {result.transport})")
    if result.latency_ms is not None:
        lines.append(f"  latency    {result.latency_ms} ms (handshake); total {result.timings.total_ms} ms")
    if result.tools is not None:
        notes = [
            n
            for n, on in (("more pages not read", result.tools.more_pages), ("truncated", result.tools.truncated))
            if on
        ]
        shown = ", ".join(result.tools.names[:10]) + (
            " ... (--json lists up to 100)" if result.tools.count > 10 else ""
        )
        lines.append(f"  tools      {result.tools.count}{' (' + ', '.join(notes) + ')' if notes else ''}: {shown}")
    lines += _auth_lines(result) + _tls_lines(result)
    if result.location:
        lines.append(f"  location   {result.location}")
    if result.retry_after is not None:
        lines.append(f"  retry in   {result.retry_after} s")
    if result.http_status is not None:
        lines.append(f"  http       {result.http_status}")
    if result.warnings:
        lines.append(f"  warnings   {', '.join(result.warnings)}")
    out.write("\n".join(lines) + "\n")


def _auth_lines(result: ProbeResult) -> list[str]:
    if result.auth is None:
        return []
    lines = []
    challenge = result.auth.challenge
    if challenge is not None:
        parts = [challenge.scheme or "?"] + [
            f"{name}={value}"
            for name, value in (("realm", challenge.realm), ("scope", challenge.scope), ("error", challenge.error))
            if value
        ]
        lines.append(f"  challenge  {' '.join(parts)}")
    metadata = result.auth.metadata
    if metadata is None:
        tried = len(result.auth.lookups)
        lines.append(f"  metadata   not published ({tried} location{'s' if tried != 1 else ''} tried)")
    else:
        match = "matches" if metadata.resource_matches else "does NOT match the URL"
        lines.append(f"  metadata   {metadata.url}")
        lines.append(f"  resource   {metadata.resource or '?'} ({match})")
        if metadata.authorization_servers:
            lines.append(f"  auth srv   {', '.join(metadata.authorization_servers)}")
        if metadata.scopes_supported:
            lines.append(f"  scopes     {' '.join(metadata.scopes_supported)}")
    return lines


def _tls_lines(result: ProbeResult) -> list[str]:
    tls = result.tls
    if tls is None:
        return []
    state = "verified" if tls.verified else "NOT verified"
    expiry = ""
    if tls.not_after is not None:
        expiry = f", expires {tls.not_after:%Y-%m-%d} ({tls.days_left} days)"
        if tls.days_left is not None and tls.days_left < 0:
            expiry = f", EXPIRED {tls.not_after:%Y-%m-%d} ({-tls.days_left} days ago)"
    lines = [f"  tls        {state}{expiry}"]
    if tls.issuer:
        lines.append(f"  issuer     {tls.issuer}")
    if tls.names:
        lines.append(f"  names      {', '.join(tls.names[:5])}{' ...' if len(tls.names) > 5 else ''}")
    return lines


def _check(args: argparse.Namespace) -> int:
    overrides: dict[str, object] = {}
    if args.allow_private:
        overrides["allow_private"] = True
    if args.ca_bundle:
        overrides["ca_bundle"] = args.ca_bundle
    try:
        settings = Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        for error in exc.errors():
            where = ".".join(str(part) for part in error["loc"]) or "settings"
            sys.stderr.write(f"mcp-sonde: invalid setting {where}: {error['msg']}\n")
        return EXIT_USAGE
    try:
        result = anyio.run(lambda: probe(args.url, light=args.light, settings=settings))
    except TargetRefused as exc:
        if args.json:
            sys.stdout.write(json.dumps({"error": {"reason": exc.reason, "message": exc.message}}) + "\n")
        sys.stderr.write(f"refused: {exc.reason}: {exc.message}\n")
        if _looks_local(exc.reason, args.url) and not settings.allow_private:
            sys.stderr.write("hint: for a server on this machine, add --allow-private (development only)\n")
        return EXIT_REFUSED
    except SondeError as exc:
        sys.stderr.write(f"error: {exc.reason}: {exc.message}\n")
        return EXIT_INTERNAL
    if args.json:
        sys.stdout.write(result.model_dump_json(indent=2) + "\n")
    else:
        _summary(result, sys.stdout)
    return EXIT_CODES[result.status]


def _serve(args: argparse.Namespace) -> int:
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
    try:
        settings = Settings()
    except ValidationError as exc:
        for error in exc.errors():
            where = ".".join(str(part) for part in error["loc"]) or "settings"
            sys.stderr.write(f"mcp-sonde: invalid setting {where}: {error['msg']}\n")
        return EXIT_USAGE
    if settings.workers > 1 and not settings.redis_url:
        sys.stderr.write("mcp-sonde: the embedded store is per process; set REDIS_URL to run more than one worker\n")
        return EXIT_USAGE
    import uvicorn

    uvicorn.run(
        "app.service.app:create_app",
        factory=True,
        host=settings.host,
        port=settings.port,
        workers=settings.workers,
        access_log=False,  # uvicorn's access log prints query strings; ours does not
        proxy_headers=False,  # client IPs follow the trusted_proxies setting instead
        log_config=SERVICE_LOGGING,  # applied in every worker process
        limit_concurrency=settings.limit_concurrency,
        timeout_keep_alive=5,
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (subcommands ``check`` and, with the service, ``serve``)."""
    parser = argparse.ArgumentParser(prog="mcp-sonde", description="Live checks of remote MCP servers.")
    parser.add_argument("--version", action="version", version=f"mcp-sonde {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="probe one MCP endpoint and print the result")
    check.add_argument("url", help="the MCP endpoint URL (https://host/path)")
    check.add_argument("--light", action="store_true", help="handshake only, no tools/list")
    check.add_argument("--json", action="store_true", help="print the full result as JSON")
    check.add_argument(
        "--allow-private",
        action="store_true",
        help="development only: allow http, loopback/private addresses, IP literals and any port",
    )
    check.add_argument("--ca-bundle", help="PEM file of extra CAs to trust")
    check.set_defaults(handler=_check)
    serve = commands.add_parser("serve", help="run the HTTP API (settings: MCP_SONDE_* and REDIS_URL)")
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
    configure_cli_logging()
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")  # never fail on output, whatever a server sent
    args = build_parser().parse_args(argv)
    code: int = args.handler(args)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
