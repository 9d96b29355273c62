"""Sign a served full check: statement, canonical bytes, envelope, id.

The payload is the canonical form of the statement (:func:`app.canonical.canonical_bytes`:
Unicode NFC, duplicate keys refused, RFC 8785), so the bytes signed are the bytes a verifier
re-derives. The attestation id is the lower-case hex SHA-256 of those payload bytes: anyone
holding the envelope recomputes it, and two different statements never share one.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from app.attest import dsse
from app.attest.errors import NoSigningKey
from app.attest.keyring import KeyRing
from app.attest.statement import statement
from app.canonical import canonical_bytes

if TYPE_CHECKING:
    from app.suite.model import CheckResult

logger = logging.getLogger("mcp_sonde.attest")


@dataclass(frozen=True)
class Attestation:  # (not slotted: envelope_json is cached on the instance)
    """A signed result: its id, the envelope, the statement's canonical bytes, and the digest of
    the answer it signs (``None`` when the answer had no canonical form)."""

    id: str
    envelope: dsse.Envelope
    payload: bytes
    result_sha256: str | None = None

    @functools.cached_property
    def envelope_json(self) -> bytes:
        """The envelope as compact JSON: spliced into the answer, kept in the store and the history."""
        return json.dumps(self.envelope, separators=(",", ":")).encode()


class Attestor:
    """Signs full check results with the newest key of ``ring`` valid at their ``observed_at``."""

    def __init__(self, ring: KeyRing) -> None:
        self.ring = ring
        self._told = -60.0

    def ready(self) -> None:
        """Check that a key may sign now (before anything is charged).

        Raises:
            NoSigningKey: no held key is valid now (logged, at most once a minute).
        """
        try:
            self.ring.signing_key(datetime.now(UTC))
        except NoSigningKey:
            if time.monotonic() - self._told > 60:
                self._told = time.monotonic()
                logger.error("no signing key is valid now: checks are refused (mcp-sonde keys new makes one)")
            raise

    def state(self) -> dict[str, str | bool | None]:
        """For ``/readyz``: whether a key may sign now, and which."""
        try:
            return {"ok": True, "keyid": self.ring.signing_key(datetime.now(UTC)).keyid}
        except NoSigningKey:
            return {"ok": False, "keyid": None}

    def attest(self, result: CheckResult, served: bytes) -> Attestation:
        """Sign ``result``; ``served`` is its JSON text as it will be served (without attestation).

        Raises:
            NoSigningKey: no held key is valid at the result's ``observed_at``.
        """
        body = statement(result, served, datetime.now(UTC))
        observed = datetime.fromisoformat(body["predicate"]["observed_at"])
        held = self.ring.signing_key(observed)
        payload = canonical_bytes(body)
        envelope = dsse.sign(payload, [(held.keyid, held.key)])
        digest = body["predicate"]["result_sha256"]
        return Attestation(hashlib.sha256(payload).hexdigest(), envelope, payload, digest)
