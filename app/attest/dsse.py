"""DSSE envelopes, signing side (DSSE v1.0, ``envelope.md`` and ``protocol.md``).

The signature is over the Pre-Authentication Encoding of the payload, never the payload alone::

    PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body

where ``LEN`` is the length in bytes as ASCII decimal without leading zeros and ``SP`` one
space (0x20). The envelope carries the payload and each signature in standard base64 (RFC 4648
section 4, with padding), as the in-toto attestation framework's envelope layer specifies.

Ed25519 (RFC 8032) is deterministic, so signing the same payload with the same key gives the
same bytes. The verifier (:mod:`app.attest.verify`) encodes PAE with code of its own.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import TypedDict

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

#: ``payloadType`` of an in-toto statement (in-toto attestation framework, envelope layer).
PAYLOAD_TYPE = "application/vnd.in-toto+json"


class Signature(TypedDict):
    """One signature of an envelope: the key id and the base64 signature."""

    keyid: str
    sig: str


class Envelope(TypedDict):
    """A DSSE envelope (JSON form)."""

    payloadType: str
    payload: str
    signatures: list[Signature]


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE's Pre-Authentication Encoding of ``payload`` (see the module docs)."""
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 " + str(len(kind)).encode() + b" " + kind + b" " + str(len(payload)).encode() + b" " + payload


def sign(payload: bytes, keys: Sequence[tuple[str, Ed25519PrivateKey]], payload_type: str = PAYLOAD_TYPE) -> Envelope:
    """An envelope of ``payload`` with one Ed25519 signature per ``(keyid, private key)``."""
    message = pae(payload_type, payload)
    return Envelope(
        payloadType=payload_type,
        payload=base64.b64encode(payload).decode("ascii"),
        signatures=[
            Signature(keyid=keyid, sig=base64.b64encode(key.sign(message)).decode("ascii")) for keyid, key in keys
        ],
    )
