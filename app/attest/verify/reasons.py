"""Why a verification failed: stable reason keys, each with its own exit code.

The same keys and codes are used by ``mcp-sonde verify`` and ``tools/verify-attestation.mjs``.
"""

from __future__ import annotations

from typing import Final

from app.errors import SondeError

#: reason -> (exit code, meaning), in the order the checks run.
FAILURES: Final[dict[str, tuple[int, str]]] = {
    "envelope_unreadable": (30, "The input is not a DSSE envelope (JSON with payloadType, payload, signatures)."),
    "payload_type_unexpected": (31, "The envelope's payloadType is not application/vnd.in-toto+json."),
    "keys_unavailable": (32, "The key document could not be read, fetched or parsed."),
    "key_unknown": (33, "No signature names a key the key document lists."),
    "signature_invalid": (34, "No signature verifies with the key it names."),
    "key_revoked": (35, "Every key whose signature verifies is revoked."),
    "id_mismatch": (42, "The attestation id beside the envelope is not the SHA-256 of its payload."),
    "payload_duplicate_key": (36, "The payload holds an object with a key twice."),
    "payload_not_canonical": (37, "The payload bytes are not their own canonical form (NFC, RFC 8785)."),
    "statement_invalid": (38, "The payload is not an in-toto Statement v1 of our predicate type."),
    "predicate_invalid": (39, "The predicate does not match its JSON Schema."),
    "key_not_valid_at_observed_at": (40, "No verifying key was valid at the statement's observed_at."),
    "result_mismatch": (41, "The check result beside the envelope is not the one the statement signs."),
}
EXIT_OK: Final = 0


class VerificationFailed(SondeError):
    """The envelope does not verify; ``reason`` is a key of :data:`FAILURES`."""

    @property
    def exit_code(self) -> int:
        return FAILURES[self.reason][0]
