"""``mcp-sonde verify ENVELOPE [--keys FILE|URL] [--json] [--allow-private]``: check a signed result offline.

ENVELOPE is a file (``-``: standard input) holding a DSSE envelope, a check answer with its
``attestation``, or a ``GET /v1/attestations/{id}`` answer. The key document is ``--keys`` (a
file, or an ``https://`` URL fetched through the target guard), else this installation's own
(``MCP_SONDE_KEYS_FILE``, default ``<data dir>/keys/keys.json``); no network is used unless a
URL is given. Exit codes: 0 verified; 2 usage; one code per failure
(:data:`app.attest.verify.reasons.FAILURES`).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from app.attest.verify.reasons import EXIT_OK, FAILURES, VerificationFailed

EXIT_HELP = "exit codes: 0 verified; 2 usage; " + ", ".join(
    f"{code} {reason}" for reason, (code, _) in FAILURES.items()
)


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``verify``."""
    verify = commands.add_parser(
        "verify",
        help="verify a signed check result (a DSSE envelope) offline",
        description="Verify a DSSE envelope of an mcp-sonde statement: signature, key, canonical bytes, schemas.",
        epilog=EXIT_HELP,
    )
    verify.add_argument("envelope", help="file with the envelope or the check answer holding it ('-': stdin)")
    verify.add_argument("--keys", metavar="FILE|URL", help="key document (default: this installation's)")
    verify.add_argument("--json", action="store_true", help="print the verdict and the statement's facts as JSON")
    verify.add_argument("--allow-private", action="store_true", help="development only: a keys URL may be local")
    verify.add_argument("--ca-bundle", help="PEM file of extra CAs to trust for a keys URL")
    verify.set_defaults(handler=run)


def _keys(args: argparse.Namespace) -> bytes:
    from app.attest.verify import source

    where: str | None = args.keys
    if where is not None and where.lower().startswith(("https://", "http://")):
        import anyio

        url = where

        async def fetched() -> bytes:
            return await source.fetch(url, allow_private=args.allow_private, ca_bundle=args.ca_bundle)

        return anyio.run(fetched)
    if where is None:
        from app.cli.check import settings_of

        settings = settings_of({})  # (an invalid setting is printed)
        if settings is None:
            raise VerificationFailed(
                "keys_unavailable", "no --keys given, and the settings naming the key document are invalid"
            )
        where = str(settings.keys_path)
    return source.read_file(where)


def _input(name: str) -> bytes:
    from app.attest.verify.verifier import MAX_INPUT_BYTES

    try:
        if name == "-":
            return sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
        with open(name, "rb") as source:
            return source.read(MAX_INPUT_BYTES + 1)
    except OSError as exc:
        raise VerificationFailed("envelope_unreadable", f"cannot read {name}: {exc.strerror}") from None


def run(args: argparse.Namespace) -> int:
    """Verify, print the verdict, return the exit code."""
    from app.attest.verify.keydoc import parse_keys
    from app.attest.verify.summary import describe, facts, to_json
    from app.attest.verify.verifier import verify

    try:
        raw = _input(args.envelope)
        # the key document is read (or fetched) once the input is known to be an envelope of ours
        verified = verify(raw, lambda: parse_keys(_keys(args)))
    except VerificationFailed as exc:
        if args.json:
            sys.stdout.write(json.dumps({"verified": False, "reason": exc.reason, "detail": exc.message}) + "\n")
        sys.stderr.write(f"NOT VERIFIED ({exc.reason}): {exc.message}\n")
        return exc.exit_code
    report: dict[str, Any] = facts(verified)
    if args.json:
        sys.stdout.write(to_json(report) + "\n")
    else:
        sys.stdout.write(describe(report) + "\n")
    return EXIT_OK
