"""The key ring: which key signs now, and the operations ``mcp-sonde keys`` runs on the document.

Which keys this instance holds: the key from settings (``MCP_SONDE_SIGNING_KEY`` or
``MCP_SONDE_SIGNING_KEY_FILE``) when one is set, else the private key files ``<keyid>.pem``
beside the key document. Of the held keys valid at a check's ``observed_at``
(:meth:`app.attest.document.KeyEntry.valid_at`), the newest signs.

At start (:func:`open_keyring`): a configured key missing from the document is added to it; a
configured key the document lists as revoked or expired stops the start. With no key
configured and none held that may sign, one is generated into the data directory, and the log
says so. At run time the document is read again when its file changes (checked at most once a
second), so ``mcp-sonde keys new`` or ``revoke`` take effect without a restart.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from app.attest.document import KeyDocument, KeyEntry, locked, read_document, utc_now, write_document
from app.attest.errors import KeyDocumentError, NoSigningKey
from app.attest.keys import key_id, load_private, public_pem, write_private
from app.settings import Settings

logger = logging.getLogger("mcp_sonde.attest")
RELOAD_S = 1.0


@dataclass(frozen=True)
class Held:
    """A key this instance may sign with."""

    keyid: str
    key: Ed25519PrivateKey


class KeyRing:
    """The key document and the private keys held (see the module docs).

    Args:
        path: the key document.
        configured: the key from settings, if any (then no key file is read).
    """

    def __init__(self, path: Path, configured: Ed25519PrivateKey | None = None) -> None:
        self.path = path
        self._configured = Held(key_id(configured.public_key()), configured) if configured is not None else None
        self._document = KeyDocument()
        self._stamp: tuple[int, int, int] | None = None
        self._checked = -RELOAD_S
        self._files: dict[str, Held | None] = {}

    def document(self) -> KeyDocument:
        """The key document, read again if its file changed (at most one look a second)."""
        now = time.monotonic()
        if now - self._checked >= RELOAD_S:
            self._checked = now
            try:
                info = self.path.stat()
                stamp: tuple[int, int, int] | None = (info.st_ino, info.st_mtime_ns, info.st_size)
            except OSError:
                stamp = None
            if stamp is None and self._stamp is not None:
                logger.error("the key document %s is gone: the last one read is kept", self.path)
            elif stamp != self._stamp:
                try:
                    self._document = read_document(self.path)
                    self._stamp = stamp
                except KeyDocumentError as exc:  # keep serving the last good document
                    logger.error("the key document could not be read again (%s): %s", exc.reason, exc.message)
        return self._document

    def refresh(self) -> None:
        """Read the document again on next use (after this process changed it)."""
        self._checked = -RELOAD_S
        self._stamp = None

    def held(self, keyid: str) -> Held | None:
        """The private key ``keyid`` when this instance holds it, whatever the document says of
        it now (a key no longer signing still derives what it derived, :mod:`app.webhooks.secrets`)."""
        return self._held(keyid)

    def _held(self, keyid: str) -> Held | None:
        if self._configured is not None:
            return self._configured if self._configured.keyid == keyid else None
        if keyid not in self._files:
            path = self.path.parent / f"{keyid}.pem"
            try:
                key = load_private(path.read_bytes(), str(path))
                self._files[keyid] = Held(keyid, key) if key_id(key.public_key()) == keyid else None
            except (OSError, KeyDocumentError):
                return None  # not held here (yet): looked for again next time
        return self._files[keyid]

    def signing_key(self, at: datetime) -> Held:
        """The newest held key valid at ``at``.

        Raises:
            NoSigningKey: none is (every held key revoked, expired, or not yet valid).
        """
        keys = self.document().keys
        # Newest first; of two with one valid_from, the one listed later (added later).
        for _, entry in sorted(enumerate(keys), key=lambda pair: (pair[1].valid_from, pair[0]), reverse=True):
            if entry.valid_at(at):
                held = self._held(entry.keyid)
                if held is not None:
                    return held
        raise NoSigningKey()


def generate(path: Path, *, private_out: Path | None = None, valid_until: datetime | None = None) -> KeyEntry:
    """Make a new key, write its private half (``<keyid>.pem`` beside ``path``, or ``private_out``,
    whose directory must exist) and add it to the document; it signs from now on (the newest key).

    Raises:
        KeyDocumentError: ``keys_invalid`` for a ``valid_until`` not in the future,
            ``keys_unwritable`` for a ``private_out`` whose directory does not exist.
    """
    if valid_until is not None and valid_until <= utc_now():
        raise KeyDocumentError("keys_invalid", "valid_until must be in the future (the key would never sign)")
    if private_out is not None and not private_out.parent.is_dir():
        raise KeyDocumentError("keys_unwritable", f"the directory of {private_out} does not exist")
    with locked(path):
        return _generate(path, read_document(path), private_out, valid_until)


def _generate(path: Path, document: KeyDocument, private_out: Path | None, valid_until: datetime | None) -> KeyEntry:
    """:func:`generate` with the lock held and the document read."""
    key = Ed25519PrivateKey.generate()
    entry = KeyEntry(keyid=key_id(key.public_key()), public_key=public_pem(key.public_key()),
                     valid_from=utc_now(), valid_until=valid_until)  # fmt: skip
    write_private(private_out or path.parent / f"{entry.keyid}.pem", key)
    write_document(path, KeyDocument(keys=[*document.keys, entry]))
    return entry


def _change(path: Path, keyid: str, **update: object) -> KeyEntry:
    with locked(path):
        document = read_document(path)
        entry = document.find(keyid)
        if entry is None:
            raise KeyDocumentError("key_unknown", f"{path} lists no key {keyid}")
        changed = entry.model_copy(update=update)
        write_document(path, KeyDocument(keys=[changed if e.keyid == keyid else e for e in document.keys]))
    return changed


def revoke(path: Path, keyid: str, at: datetime | None = None) -> KeyEntry:
    """Mark ``keyid`` revoked (from then on nothing it signed verifies)."""
    return _change(path, keyid, revoked=True, revoked_at=at or utc_now())


def retire(path: Path, keyid: str, at: datetime | None = None) -> KeyEntry:
    """End ``keyid``'s validity at ``at`` (now): it signs nothing later; what it signed still verifies."""
    return _change(path, keyid, valid_until=at or utc_now())


def open_keyring(path: Path, configured: Ed25519PrivateKey | None = None) -> KeyRing:
    """The key ring of a starting service (see the module docs).

    Raises:
        KeyDocumentError: the document cannot be read or written, or the configured key is
            revoked (``signing_key_revoked``) or expired (``signing_key_expired``).
    """
    ring = KeyRing(path, configured)
    with locked(path):
        # "now" only once the lock is held: a key another process generated while this one
        # waited is valid from a second no later than this one, so it is found and reused.
        now = utc_now()
        document = read_document(path)
        if configured is None:
            try:
                held = ring.signing_key(now)
            except NoSigningKey:
                made = _generate(path, document, None, None)
                logger.warning("no signing key was configured or valid: generated %s into %s", made.keyid, path.parent)
            else:
                logger.debug("results are signed with key %s (%s)", held.keyid, path.parent / f"{held.keyid}.pem")
            ring.refresh()
            return ring
        keyid = key_id(configured.public_key())
        entry = document.find(keyid)
        if entry is None:
            entry = KeyEntry(keyid=keyid, public_key=public_pem(configured.public_key()), valid_from=now)
            write_document(path, KeyDocument(keys=[*document.keys, entry]))
            logger.warning("the configured signing key %s was added to the key document %s", keyid, path)
        elif entry.revoked:
            raise KeyDocumentError("signing_key_revoked", f"the configured signing key {keyid} is revoked in {path}")
        elif not entry.valid_at(now):
            raise KeyDocumentError("signing_key_expired", f"the configured signing key {keyid} is not valid now")
    ring.refresh()
    return ring


def configured_key(settings: Settings) -> Ed25519PrivateKey | None:
    """The signing key the settings name (``signing_key``, else ``signing_key_file``), if any.

    Raises:
        KeyDocumentError: ``private_key_invalid`` (or ``keys_unreadable`` for a file that cannot be read).
    """
    if settings.signing_key is not None:
        try:
            pem = settings.signing_key.get_secret_value().encode()
        except UnicodeError as exc:
            raise KeyDocumentError("private_key_invalid", "MCP_SONDE_SIGNING_KEY is not a PEM text") from exc
        return load_private(pem, "MCP_SONDE_SIGNING_KEY")
    if settings.signing_key_file is not None:
        path = settings.signing_key_file
        try:
            if not path.is_file():
                raise KeyDocumentError("keys_unreadable", f"the signing key file {path} is not a regular file")
            with path.open("rb") as source:
                pem = source.read(64 * 1024)
        except OSError as exc:
            raise KeyDocumentError(
                "keys_unreadable", f"cannot read the signing key file {path}: {exc.strerror}"
            ) from exc
        return load_private(pem, str(path))
    return None


def keyring_of(settings: Settings) -> KeyRing:
    """:func:`open_keyring` for ``settings`` (the key document path and the configured key)."""
    return open_keyring(settings.keys_path, configured_key(settings))


def signing_source(settings: Settings, keyid: str) -> str:
    """Where the key ``keyid`` of ``settings`` comes from, for the one start-up line that names it."""
    if settings.signing_key is not None:
        return "MCP_SONDE_SIGNING_KEY"
    if settings.signing_key_file is not None:
        return f"MCP_SONDE_SIGNING_KEY_FILE={settings.signing_key_file}"
    return str(settings.keys_path.parent / f"{keyid}.pem")
