"""The key document as the verifier reads it: parsed with code of its own, every field checked.

A key document may come from anywhere (a file, a URL), so nothing in it is trusted: each entry
must be an object with a 16-hex ``keyid`` that is the SHA-256 prefix of its own public key
(``docs/attestations.md``), an Ed25519 SubjectPublicKeyInfo PEM, RFC 3339 times, and a boolean
``revoked``. An entry that fails makes the whole document ``keys_unavailable``: a verifier
that skipped it could accept a key its owner meant to revoke.

A time is RFC 3339 ``date-time`` (section 5.6) with upper-case ``T`` and ``Z`` and an offset
within a day, and a real date and time (no leap second): ``2026-12-01T16:00:00Z``,
``2026-12-01T17:00:00.5+01:00``. The looser ISO 8601 forms :meth:`datetime.fromisoformat`
would read (``2026-12-01T16:00Z``, ``20261201T160000Z``, week dates, a space for ``T``) are
refused, so that every verifier reads one document the same way (``tools/verify-attestation.mjs``
has the same grammar). Fractions beyond microseconds are cut, as ``fromisoformat`` does.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from app import jsonsafe
from app.attest.verify.jcs import MAX_NESTING
from app.attest.verify.reasons import VerificationFailed

MAX_KEYS_BYTES = 64 * 1024
_RFC3339 = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?"  # date "T" time, any fraction
    r"(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])"  # "Z" or an offset under 24 hours
)


@dataclass(frozen=True)
class ListedKey:
    """One key of a key document."""

    keyid: str
    public: Ed25519PublicKey
    valid_from: datetime
    valid_until: datetime | None
    revoked: bool
    revoked_at: datetime | None

    def valid_at(self, moment: datetime) -> bool:
        """``moment`` within ``[valid_from, valid_until]`` (revocation is checked apart)."""
        return self.valid_from <= moment and (self.valid_until is None or moment <= self.valid_until)


def _bad(message: str) -> VerificationFailed:
    return VerificationFailed("keys_unavailable", f"the key document is invalid: {message}")


def _time(entry: dict[str, object], name: str, required: bool) -> datetime | None:
    value = entry.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not _RFC3339.fullmatch(value):
        raise _bad(f"{name} is not an RFC 3339 time")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise _bad(f"{name} is not an RFC 3339 time") from None
    return moment  # aware: the grammar asks for an offset


def _key(entry: object) -> ListedKey:
    if not isinstance(entry, dict):
        raise _bad("a key is not an object")
    pem = entry.get("public_key")
    if entry.get("algorithm") != "ed25519" or not isinstance(pem, str):
        raise _bad("a key is not an ed25519 key with a public_key")
    try:
        public = serialization.load_pem_public_key(pem.encode())
    except (ValueError, TypeError, UnicodeError):
        raise _bad("a public_key is not readable PEM") from None
    except UnsupportedAlgorithm:  # a key algorithm cryptography does not know
        raise _bad("a public_key is not Ed25519") from None
    if not isinstance(public, Ed25519PublicKey):
        raise _bad("a public_key is not Ed25519")
    der = public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    keyid = hashlib.sha256(der).hexdigest()[:16]
    if entry.get("keyid") != keyid:
        raise _bad(f"a keyid is not the SHA-256 prefix of its public key (expected {keyid})")
    revoked = entry.get("revoked")
    if not isinstance(revoked, bool):
        raise _bad(f"revoked of {keyid} is not a boolean")
    return ListedKey(keyid, public, _time(entry, "valid_from", True), _time(entry, "valid_until", False),  # type: ignore[arg-type]
                     revoked, _time(entry, "revoked_at", False))  # fmt: skip


class _Twice(Exception):
    """An object of the key document holds a member twice."""


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name, value in pairs:
        if name in found:
            raise _Twice
        found[name] = value
    return found


def parse_keys(raw: bytes) -> dict[str, ListedKey]:
    """The keys of a key document, by key id.

    Raises:
        VerificationFailed: ``keys_unavailable`` (too large, not JSON, or any entry invalid).
    """
    if len(raw) > MAX_KEYS_BYTES:
        raise _bad(f"larger than {MAX_KEYS_BYTES} bytes")
    if jsonsafe.too_deep(raw, MAX_NESTING):
        raise _bad(f"nested deeper than {MAX_NESTING} levels")
    try:
        document = json.loads(raw.decode("utf-8"), object_pairs_hook=_unique)
    except _Twice:
        raise _bad("an object holds a member twice (a revocation must not be ambiguous)") from None
    except (ValueError, RecursionError):  # ValueError: also an integer too long for int()
        raise _bad("not UTF-8 JSON") from None
    keys = document.get("keys") if isinstance(document, dict) else None
    if not isinstance(keys, list):
        raise _bad("no keys array")
    listed: dict[str, ListedKey] = {}
    for entry in keys:
        key = _key(entry)
        if key.keyid in listed:
            raise _bad(f"{key.keyid} is listed twice")
        listed[key.keyid] = key
    return listed
