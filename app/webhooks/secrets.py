"""A monitor's webhook secret (Standard Webhooks), derived from the instance's signing keys.

Policy: the secret (``whsec_`` and the base64 of the key, at least 24 bytes; ours has 32) is
not stored at all: it is derived with HKDF-SHA256 (RFC 5869) from the raw private key of the
signing key that signed at the monitor's creation, with the info
``mcp-sonde webhook secret v1\\n<monitor id>`` (its own label: the secret says nothing of the
signing key nor of the baseline proof key, :mod:`app.baselines.proof`). The monitor keeps the
key id, so a key rotation does not change a monitor's secret while the old key's private file
is kept; an instance that no longer holds that key cannot sign the monitor's webhooks (the
delivery fails as ``webhook_secret_unavailable``).
"""

from __future__ import annotations

import base64
from datetime import datetime

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from app.attest.keyring import KeyRing

SECRET_PREFIX = "whsec_"
_INFO = b"mcp-sonde webhook secret v1\n"


def derive(signing_key: Ed25519PrivateKey, monitor_id: str) -> bytes:
    """The webhook key of the monitor ``monitor_id`` under ``signing_key`` (see the module docs)."""
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO + monitor_id.encode())
    return hkdf.derive(signing_key.private_bytes_raw())


def as_whsec(key: bytes) -> str:
    """The key as a Standard Webhooks secret string."""
    return SECRET_PREFIX + base64.b64encode(key).decode()


class WebhookSecrets:
    """Derives monitors' webhook secrets from the instance's signing keys (see the module docs)."""

    def __init__(self, ring: KeyRing) -> None:
        self.ring = ring

    def new(self, monitor_id: str, at: datetime) -> tuple[str, bytes]:
        """``(key id, key)`` for a monitor made at ``at``, under the key that signs then.

        Raises:
            NoSigningKey: no held key may sign now.
        """
        held = self.ring.signing_key(at)
        return held.keyid, derive(held.key, monitor_id)

    def of(self, monitor_id: str, keyid: str) -> bytes | None:
        """The monitor's key, or ``None`` when the key ``keyid`` is not held here."""
        held = self.ring.held(keyid)
        return None if held is None else derive(held.key, monitor_id)
