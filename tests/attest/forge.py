"""Test helpers to make keys, key documents and envelopes, honest or forged.

Envelopes are signed with the signer's own code (:func:`app.attest.dsse.sign`) unless a test
signs with another implementation on purpose. ``statement()`` is a real statement of a check
of the ``stateless-json`` fixture server (``tests/data/attest/statement.json``), observed on
2026-12-01; keys made here are valid from 2026-01-01 unless told otherwise.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from app.attest import dsse
from app.attest.document import KeyDocument, KeyEntry
from app.attest.keys import key_id, public_pem
from app.canonical import canonical_bytes

SAMPLE = Path(__file__).parents[1] / "data" / "attest" / "statement.json"
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass
class Key:
    """A private key and its entry in a key document."""

    private: Ed25519PrivateKey
    entry: KeyEntry

    @property
    def keyid(self) -> str:
        return self.entry.keyid


def make_key(valid_from: datetime = EPOCH, valid_until: datetime | None = None, revoked: bool = False) -> Key:
    """A new Ed25519 key with its key document entry."""
    private = Ed25519PrivateKey.generate()
    entry = KeyEntry(keyid=key_id(private.public_key()), public_key=public_pem(private.public_key()),
                     valid_from=valid_from, valid_until=valid_until, revoked=revoked,
                     revoked_at=valid_from if revoked else None)  # fmt: skip
    return Key(private, entry)


def keys_document(*keys: Key) -> bytes:
    """The key document listing ``keys`` (as served)."""
    return json.dumps(KeyDocument(keys=[key.entry for key in keys]).published()).encode()


def statement() -> dict[str, Any]:
    """A fresh copy of the sample statement."""
    value: dict[str, Any] = json.loads(SAMPLE.read_text("utf-8"))
    return copy.deepcopy(value)


def envelope(payload: bytes | dict[str, Any], key: Key, keyid: str | None = None) -> dict[str, Any]:
    """An envelope of ``payload`` (a statement is put in canonical form first), signed by ``key``
    and naming ``keyid`` (default: the key's own id)."""
    body = payload if isinstance(payload, bytes) else canonical_bytes(payload)
    signed = dsse.sign(body, [(keyid if keyid is not None else key.keyid, key.private)])
    return dict(signed)


def payload_of(envelope: dict[str, Any]) -> bytes:
    """The payload bytes of an envelope."""
    return base64.b64decode(envelope["payload"])


def id_of(envelope: dict[str, Any]) -> str:
    """The attestation id of an envelope: the SHA-256 of its payload."""
    return hashlib.sha256(payload_of(envelope)).hexdigest()


def dumps(value: dict[str, Any]) -> bytes:
    """JSON bytes of an envelope or answer, for the verifiers' input."""
    return json.dumps(value).encode()
