"""DSSE Pre-Authentication Encoding, verifier side (DSSE v1.0 ``protocol.md``).

``PAE(type, body) = "DSSEv1" + SP + LEN(type) + SP + type + SP + LEN(body) + SP + body``, where
``LEN(s)`` is the byte length of ``s`` in ASCII decimal and ``SP`` is the byte 0x20.
"""

from __future__ import annotations


def encode(payload_type: str, body: bytes) -> bytes:
    """The PAE bytes that DSSE signatures are over."""
    type_bytes = payload_type.encode("utf-8")
    parts = [b"DSSEv1", b"%d" % len(type_bytes), type_bytes, b"%d" % len(body), body]
    return b" ".join(parts)
