"""Signed results kept for ``GET /v1/attestations/{id}``, in the shared store.

Each envelope is kept ``attestation_ttl_s`` under its id (the SHA-256 of its payload). On Redis
they expire with it; the embedded store keeps them as cache entries, the first evicted when
its bound is reached (``memory_store_max_bytes``). A store outage loses an envelope, never a
check: the answer carries its envelope whatever the store did.
"""

from __future__ import annotations

import logging
import re

from app.attest.signer import Attestation
from app.store import Store, StoreError, key

logger = logging.getLogger("mcp_sonde.attest")
ID_PATTERN = re.compile(r"^[0-9a-f]{64}$")


class AttestationStore:
    """Envelopes by attestation id."""

    def __init__(self, store: Store, ttl_s: float) -> None:
        self._store = store
        self._ttl_s = ttl_s

    async def put(self, attestation: Attestation) -> None:
        """Keep ``attestation`` (a store fault is logged, not raised)."""
        body = attestation.envelope_json
        try:
            await self._store.set(key("attestation", attestation.id), body, self._ttl_s)
        except StoreError as exc:
            logger.warning("an attestation could not be kept: %s", exc)

    async def get(self, attestation_id: str) -> bytes | None:
        """The envelope's JSON bytes, or ``None`` (unknown, expired, or a malformed id)."""
        if not ID_PATTERN.fullmatch(attestation_id):
            return None
        try:
            return await self._store.get(key("attestation", attestation_id))
        except StoreError:
            return None
