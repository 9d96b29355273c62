"""``mcp-sonde check``: one probe from the command line, its exit code the result's status class.

A full check runs the check suite (:mod:`app.suite`); ``--light`` is the handshake alone.
``--header 'Name: value'`` makes it a credentialed check (the values are sent to the probed
origin only and never printed). Ctrl-C ends the probe cleanly with exit code 130.
"""

from __future__ import annotations

import argparse
import importlib
import ipaddress
import json
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

import anyio
from pydantic import ValidationError

from app.cli.codes import EXIT_CODES, EXIT_HELP, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_REFUSED, EXIT_USAGE
from app.cli.progress import Progress
from app.errors import SondeError, TargetRefused
from app.guard.addresses import classify
from app.guard.target import DEVELOPMENT_KINDS, AddressRefused
from app.probe.credentials import CredentialRefused, Credentials, validate
from app.settings import Settings
from app.suite.full import full_check

if TYPE_CHECKING:
    from app.probe.result import ProbeResult

#: What a check needs only once answers come: imported on a thread while the first packet goes out
#: and the network answers (the probe's own modules are kept light for that: see app.probe.findings).
_LATER: Final = ("app.probe.result", "app.suite.judge", "app.cli.summary", "app.probe.tls", "app.probe.auth")


def _import_later() -> None:
    for name in _LATER:
        importlib.import_module(name)


def _importing_once_connecting(observer: Callable[[str], None] | None) -> Callable[[str], None]:
    """``observer``, starting :func:`_import_later` on a thread when the first request's step starts
    (started earlier, the thread would slow the main thread's way to the first packet)."""
    started = False

    def observe(step: str) -> None:
        nonlocal started
        if not started and step != "dns":
            started = True
            threading.Thread(target=_import_later, name="imports", daemon=True).start()
        if observer is not None:
            observer(step)

    return observe


#: Form refusals that ``--allow-private`` lifts (when the host is this machine or a private network).
_LIFTED_FORM_REASONS: Final = frozenset(
    {"scheme_not_https", "port_not_allowed", "host_ip_literal", "host_not_public_name"}
)


def _is_local(kind: str | None) -> bool:
    return kind is not None and kind.removeprefix("embedded_") in DEVELOPMENT_KINDS


def _looks_local(refusal: TargetRefused, url: str) -> bool:
    """Whether the refused target is a loopback or private address, the case ``--allow-private`` is for:
    the addresses the guard refused, or, when the URL's form was refused first, its host (``localhost``
    or an IP literal). Any other refusal gets no hint."""
    if isinstance(refusal, AddressRefused):
        return bool(refusal.kinds) and all(_is_local(kind) for kind in refusal.kinds)
    if refusal.reason not in _LIFTED_FORM_REASONS:
        return False
    try:
        host = (urlsplit(url).hostname or "").rstrip(".")
    except ValueError:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    return _is_local(classify(address))


def usage_error(message: str) -> int:
    """Print a usage error and return its exit code."""
    sys.stderr.write(f"mcp-sonde: {message}\n")
    return EXIT_USAGE


def settings_of(overrides: dict[str, object]) -> Settings | None:
    """Settings with ``overrides``, or ``None`` after printing why they are invalid."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        for error in exc.errors():
            where = ".".join(str(part) for part in error["loc"]) or "settings"
            sys.stderr.write(f"mcp-sonde: invalid setting {where}: {error['msg']}\n")
        return None


def _credentials(given: list[str]) -> Credentials | None:
    pairs = []
    for pair in given:
        name, sep, value = pair.partition(":")
        if not sep:
            raise CredentialRefused("header_name_invalid", "a --header is 'Name: value'")
        pairs.append((name.strip(), value.strip()))
    return validate(pairs) if pairs else None


async def _run(args: argparse.Namespace, settings: Settings, credentials: Credentials | None) -> ProbeResult:
    progress = Progress(sys.stderr) if sys.stderr.isatty() else None
    if progress is None:
        return await _probe(args, settings, credentials, None)
    outcome: ProbeResult | SondeError | None = None
    async with anyio.create_task_group() as group:
        group.start_soon(progress.run)
        try:
            outcome = await _probe(args, settings, credentials, progress.step)
        except SondeError as exc:  # raised after the progress line is gone, not inside a group
            outcome = exc
        finally:
            group.cancel_scope.cancel()
    if isinstance(outcome, SondeError):
        raise outcome
    assert outcome is not None
    return outcome


async def _probe(
    args: argparse.Namespace,
    settings: Settings,
    credentials: Credentials | None,
    observer: Callable[[str], None] | None,
) -> ProbeResult:
    observer = _importing_once_connecting(observer)
    early = getattr(args, "predial", None)
    dialled = early.take(args.url, settings.allow_private) if early is not None else None
    resolved, backend = None, None
    if dialled is not None:
        from app.guard.target import ResolvedTarget
        from app.net.predialled import PreDialled

        resolved = ResolvedTarget(url=dialled.url, addresses=dialled.addresses)
        backend = PreDialled(dialled.sock, str(dialled.addresses[0]), dialled.url.port)
    try:
        if args.light:
            from app.probe.runner import observe

            observation = await observe(
                args.url, light=True, settings=settings, observer=observer, resolved=resolved, network_backend=backend
            )
            return observation.result
        return await full_check(
            args.url, settings=settings, credentials=credentials, observer=observer, include_tools=args.tools,
            resolved=resolved, network_backend=backend,
        )  # fmt: skip
    finally:
        if backend is not None:
            backend.aclose()


def run_check(args: argparse.Namespace) -> int:
    """The ``check`` subcommand."""
    overrides: dict[str, object] = {}
    if args.allow_private:
        overrides["allow_private"] = True
    if args.ca_bundle:
        overrides["ca_bundle"] = args.ca_bundle
    if args.timeout is not None:  # the budget of the whole probe; one exchange may use all of it
        overrides["light_probe_timeout_s" if args.light else "probe_timeout_s"] = args.timeout
        if args.timeout == args.timeout and args.timeout > 0:  # (a bad value is refused by the settings)
            overrides["step_timeout_s"] = max(args.timeout, Settings.model_fields["step_timeout_s"].default)
    settings = settings_of(overrides)
    if settings is None:
        return EXIT_USAGE
    try:
        credentials = _credentials(args.header or [])
    except CredentialRefused as exc:
        return usage_error(f"{exc.reason}: {exc.message}")
    if credentials is not None and args.light:
        return usage_error("--header needs a full check (drop --light)")
    if args.tools and (args.light or not args.json):
        return usage_error("--tools needs --json and a full check (no --light)")
    try:
        result = anyio.run(_run, args, settings, credentials)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return EXIT_INTERRUPTED
    except TargetRefused as exc:
        if args.json:
            sys.stdout.write(json.dumps({"error": {"reason": exc.reason, "message": exc.message}}) + "\n")
        sys.stderr.write(f"refused: {exc.reason}: {exc.message}\n")
        if _looks_local(exc, args.url) and not settings.allow_private:
            sys.stderr.write("hint: for a server on this machine, add --allow-private (development only)\n")
        return EXIT_REFUSED
    except SondeError as exc:
        sys.stderr.write(f"error: {exc.reason}: {exc.message}\n")
        return EXIT_INTERNAL
    if args.json:
        # (a result of the command line is not signed: only the service holds signing keys)
        exclude = {"attestation", "attestation_id"} | (set() if args.tools else {"tool_definitions"})
        sys.stdout.write(result.model_dump_json(indent=2, exclude=exclude) + "\n")
    else:
        from app.cli.summary import write_summary

        write_summary(result, sys.stdout)
    return EXIT_CODES[result.status]


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``check``."""
    check = commands.add_parser(
        "check",
        help="probe one MCP endpoint and print the result",
        epilog=EXIT_HELP,
        description="Probe one MCP endpoint: handshake, tools/list, the refusal call and every check of the suite.",
    )
    check.add_argument("url", help="the MCP endpoint URL (https://host/path)")
    check.add_argument("--light", action="store_true", help="handshake only, no tools/list and no check suite")
    check.add_argument("--json", action="store_true", help="print the full result as JSON")
    check.add_argument("--tools", action="store_true", help="with --json (not --light): include the tool definitions")
    check.add_argument(
        "--header",
        action="append",
        metavar="'NAME: VALUE'",
        help="send this header to the probed origin only (a credentialed check; Authorization and up to 8 "
        "more; not with --light)",
    )
    check.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="budget of the whole probe in seconds: default 15, at most 120 (with --light: default 5, at most 60)",
    )
    check.add_argument(
        "--allow-private",
        action="store_true",
        help="development only: allow http, loopback/private addresses, IP literals and any port",
    )
    check.add_argument("--ca-bundle", help="PEM file of extra CAs to trust")
    check.set_defaults(handler=run_check)
