"""The key document: every signing key with its validity, published at ``/.well-known/mcp-sonde-keys.json``.

Format (JSON, ``docs/attestations.md``)::

    {"keys": [{"keyid": "…", "algorithm": "ed25519", "public_key": "-----BEGIN PUBLIC KEY-----…",
               "valid_from": "2026-12-01T16:00:00Z", "valid_until": null,
               "revoked": false, "revoked_at": null}]}

Policy:

- A key may sign, and a signature by it verifies, for an ``observed_at`` in
  ``[valid_from, valid_until]`` (``valid_until`` null: open-ended). Several keys may be valid at
  once; the newest (latest ``valid_from``) that this instance holds signs.
- A revoked key verifies nothing, whenever it signed: revocation says the private key may be
  in other hands, who could sign any ``observed_at``. ``revoked_at`` records when.
- Times are UTC, RFC 3339 with ``Z``, whole seconds.
- The file is written whole to a temporary file and renamed over the old one (readers never
  see half a document), under an exclusive lock beside it (several processes may start at once).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError, field_validator

from app.attest.errors import KeyDocumentError
from app.attest.keys import KEYID_HEX, key_id, load_public
from app.filelock import exclusive

#: Largest key document read, bytes.
MAX_DOCUMENT_BYTES = 1024 * 1024


def utc_now() -> datetime:
    """Now, in UTC, to the whole second (the precision of the key document)."""
    return datetime.now(UTC).replace(microsecond=0)


class KeyEntry(BaseModel):
    """One key of the document."""

    model_config = ConfigDict(extra="forbid")
    keyid: str = Field(pattern=f"^[0-9a-f]{{{KEYID_HEX}}}$")
    algorithm: Literal["ed25519"] = "ed25519"
    public_key: str = Field(description="SubjectPublicKeyInfo, PEM.")
    valid_from: AwareDatetime
    valid_until: AwareDatetime | None = None
    revoked: bool = False
    revoked_at: AwareDatetime | None = None

    @field_validator("valid_from", "valid_until", "revoked_at")
    @classmethod
    def _in_utc(cls, moment: datetime | None) -> datetime | None:
        """Times are kept in UTC (one that cannot be, as 0001-01-01 at +23:59, is invalid)."""
        if moment is None:
            return None
        try:
            return moment.astimezone(UTC)
        except OverflowError as exc:
            raise ValueError("a time outside the years 1 to 9999 in UTC") from exc

    def valid_at(self, moment: datetime) -> bool:
        """Unrevoked, and ``moment`` within ``[valid_from, valid_until]``."""
        if self.revoked or moment < self.valid_from:
            return False
        return self.valid_until is None or moment <= self.valid_until


class KeyDocument(BaseModel):
    """The key document (see the module docs)."""

    model_config = ConfigDict(extra="forbid")
    keys: list[KeyEntry] = Field(default_factory=list)

    def find(self, keyid: str) -> KeyEntry | None:
        """The entry of ``keyid``, if listed."""
        return next((entry for entry in self.keys if entry.keyid == keyid), None)

    def published(self) -> dict[str, object]:
        """The document as served: JSON-ready, times in RFC 3339 with ``Z``."""
        return {"keys": [_entry_json(entry) for entry in self.keys]}


def _time(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _entry_json(entry: KeyEntry) -> dict[str, object]:
    return {
        "keyid": entry.keyid,
        "algorithm": entry.algorithm,
        "public_key": entry.public_key,
        "valid_from": _time(entry.valid_from),
        "valid_until": _time(entry.valid_until),
        "revoked": entry.revoked,
        "revoked_at": _time(entry.revoked_at),
    }


def read_document(path: Path) -> KeyDocument:
    """The document at ``path``; an empty one when the file does not exist.

    Raises:
        KeyDocumentError: ``keys_unreadable`` (I/O), ``keys_invalid`` (not a key document).
    """
    try:
        if path.exists() and not path.is_file():  # (a FIFO would block the start for ever)
            raise KeyDocumentError("keys_unreadable", f"the key document {path} is not a regular file")
        with path.open("rb") as source:
            raw = source.read(MAX_DOCUMENT_BYTES + 1)
    except FileNotFoundError:
        return KeyDocument()
    except OSError as exc:
        raise KeyDocumentError("keys_unreadable", f"cannot read the key document {path}: {exc.strerror}") from exc
    if len(raw) > MAX_DOCUMENT_BYTES:
        raise KeyDocumentError("keys_invalid", f"the key document {path} is larger than {MAX_DOCUMENT_BYTES} bytes")
    try:
        document = KeyDocument.model_validate_json(raw)
    except ValidationError as exc:
        raise KeyDocumentError("keys_invalid", f"{path} is not a key document ({exc.error_count()} errors)") from exc
    if len({entry.keyid for entry in document.keys}) != len(document.keys):
        raise KeyDocumentError("keys_invalid", f"{path} lists one key id twice")
    for entry in document.keys:  # as a verifier reads it: a key id must be its key's own
        if key_id(load_public(entry.public_key, str(path))) != entry.keyid:
            raise KeyDocumentError("keys_invalid", f"{path}: the key id {entry.keyid} is not its public key's")
    return document


def write_document(path: Path, document: KeyDocument) -> None:
    """Replace the document at ``path`` atomically (see the module docs)."""
    text = json.dumps(document.published(), indent=2) + "\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".keys-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except OSError as exc:
        raise KeyDocumentError("keys_unwritable", f"cannot write the key document {path}: {exc.strerror}") from exc


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold the exclusive lock of the document at ``path`` (a ``.lock`` file beside it)."""
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(exclusive(path.parent / ".lock"))
        except OSError as exc:
            raise KeyDocumentError(
                "keys_unwritable", f"cannot lock the key directory {path.parent}: {exc.strerror}"
            ) from exc
        yield
