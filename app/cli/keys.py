"""``mcp-sonde keys new|list|revoke|retire``: manage the key document and the signing keys.

The document is ``--keys-file``, else ``MCP_SONDE_KEYS_FILE``, else ``<data dir>/keys/keys.json``
(``MCP_SONDE_DATA_DIR``). A running service reads it again within a second of a change: a new
key signs from then on, a revoked one at once stops verifying. See ``docs/attestations.md``
for rotation step by step.

Exit codes: 0 done; 2 usage; 4 the document or a key file cannot be read or written, or the
key is not listed.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path

EXIT_KEYS = 4


def _moment(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO 8601 time (2026-12-01T12:00:00Z)") from None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC).replace(microsecond=0)


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``keys`` and its subcommands."""
    keys = commands.add_parser(
        "keys",
        help="manage the signing keys and the published key document",
        description="Manage the signing keys and the key document.",
        epilog="exit codes: 0 done; 2 usage; 4 the key document or a key cannot be used",
    )
    keys.add_argument("--keys-file", type=Path, help="the key document (default: MCP_SONDE_KEYS_FILE or the data dir)")
    actions = keys.add_subparsers(dest="action", required=True)
    new = actions.add_parser("new", help="make a new key; it signs from now on (the newest valid key signs)")
    new.add_argument(
        "--private-key-out",
        type=Path,
        help="write the private key here (for a secret store), not beside the document; then give it to "
        "the service as MCP_SONDE_SIGNING_KEY or MCP_SONDE_SIGNING_KEY_FILE",
    )
    new.add_argument("--valid-until", type=_moment, help="end of the key's validity (default: open-ended)")
    actions.add_parser("list", help="list the keys: id, validity, revocation, whether held here")
    revoke = actions.add_parser("revoke", help="revoke a key: nothing it signed verifies any more")
    revoke.add_argument("keyid")
    revoke.add_argument("--at", type=_moment, help="when it was revoked (default: now)")
    retire = actions.add_parser("retire", help="end a key's validity: it signs nothing later, what it signed verifies")
    retire.add_argument("keyid")
    retire.add_argument("--at", type=_moment, help="end of validity (default: now)")
    keys.set_defaults(handler=run)


def _path(args: argparse.Namespace) -> Path | None:
    if args.keys_file is not None:
        return Path(args.keys_file)
    from app.cli.check import settings_of

    settings = settings_of({})  # (an invalid setting is printed)
    return settings.keys_path if settings is not None else None


def run(args: argparse.Namespace) -> int:
    """Run one ``keys`` action."""
    from app.attest import keyring
    from app.attest.document import read_document
    from app.attest.errors import KeyDocumentError

    path = _path(args)
    if path is None:
        return EXIT_KEYS
    try:
        if args.action == "new":
            entry = keyring.generate(path, private_out=args.private_key_out, valid_until=args.valid_until)
            where = args.private_key_out or path.parent / f"{entry.keyid}.pem"
            sys.stdout.write(
                f"new key {entry.keyid} (valid from {entry.valid_from:%Y-%m-%dT%H:%M:%SZ}); private key in {where}"
                + "\n"
            )
        elif args.action in ("revoke", "retire"):
            change = keyring.revoke if args.action == "revoke" else keyring.retire
            entry = change(path, args.keyid, args.at)
            sys.stdout.write(f"{args.action}d key {entry.keyid} in {path}" + "\n")
        else:
            if not path.exists():
                sys.stderr.write(f"mcp-sonde keys: no key document at {path} (the service makes one on first start)\n")
                return EXIT_KEYS
            document = read_document(path)
            sys.stdout.write(f"key document {path}\n")
            header = f"{'keyid':16}  {'valid_from':20}  {'valid_until':20}  {'revoked':20}  pem_beside"
            sys.stdout.write(header + "\n")
            for entry in document.keys:
                until = f"{entry.valid_until:%Y-%m-%dT%H:%M:%SZ}" if entry.valid_until else "-"
                revoked = (
                    f"{entry.revoked_at:%Y-%m-%dT%H:%M:%SZ}" if entry.revoked_at else "yes" if entry.revoked else "no"
                )
                held = "yes" if (path.parent / f"{entry.keyid}.pem").exists() else "no"
                sys.stdout.write(
                    f"{entry.keyid:16}  {entry.valid_from:%Y-%m-%dT%H:%M:%SZ}  {until:20}  {revoked:20}  {held}" + "\n"
                )
    except KeyDocumentError as exc:
        sys.stderr.write(f"mcp-sonde keys: {exc.message} ({exc.reason})\n")
        return EXIT_KEYS
    return 0
