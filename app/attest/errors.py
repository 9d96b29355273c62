"""Errors of the signing side (the verifier has its own failure reasons, :mod:`app.attest.verify.reasons`).

::

    SondeError
    └── AttestError
        ├── KeyDocumentError   the key document cannot be read or written (``keys_unreadable``, ...)
        └── NoSigningKey       no key may sign now (``signing_key_unavailable``)
"""

from __future__ import annotations

from app.errors import SondeError


class AttestError(SondeError):
    """A fault of the signing side; ``reason`` is a stable key."""


class KeyDocumentError(AttestError):
    """The key document or a private key file cannot be read, parsed or written.

    Reasons: ``keys_unreadable``, ``keys_invalid``, ``keys_unwritable``, ``private_key_invalid``,
    ``key_unknown``, ``signing_key_revoked``, ``signing_key_expired``.
    """


class NoSigningKey(AttestError):
    """No key of the document is valid now, unrevoked, and held here (``signing_key_unavailable``)."""

    def __init__(self, message: str = "no signing key is valid now and held by this instance") -> None:
        super().__init__("signing_key_unavailable", message)
