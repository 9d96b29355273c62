"""Ed25519 keys: key ids, PEM forms, and the private key files of the data directory.

Key id (``keyid``): the first 16 hexadecimal characters (64 bits) of the SHA-256 of the public
key's DER-encoded SubjectPublicKeyInfo (RFC 5280 section 4.1.2.7, RFC 8410 section 4), so
anyone holding the public key recomputes it. Private keys are PKCS#8 PEM (RFC 5958, RFC 8410
section 7), unencrypted, in files only their owner may read (mode 0600).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from app.attest.errors import KeyDocumentError

KEYID_HEX = 16


def key_id(public: Ed25519PublicKey) -> str:
    """The key id of ``public`` (see the module docs)."""
    der = public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return hashlib.sha256(der).hexdigest()[:KEYID_HEX]


def public_pem(public: Ed25519PublicKey) -> str:
    """The SubjectPublicKeyInfo PEM of ``public``."""
    return public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()


def private_pem(key: Ed25519PrivateKey) -> bytes:
    """The unencrypted PKCS#8 PEM of ``key``."""
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def load_private(pem: bytes, where: str) -> Ed25519PrivateKey:
    """An Ed25519 private key from PKCS#8 PEM; ``private_key_invalid`` naming ``where`` otherwise."""
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as exc:
        raise KeyDocumentError("private_key_invalid", f"{where} holds no readable unencrypted private key") from exc
    except UnsupportedAlgorithm as exc:  # a key algorithm cryptography does not know
        raise KeyDocumentError("private_key_invalid", f"{where} holds a private key that is not Ed25519") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyDocumentError("private_key_invalid", f"{where} holds a private key that is not Ed25519")
    return key


def load_public(pem: str, where: str) -> Ed25519PublicKey:
    """An Ed25519 public key from SubjectPublicKeyInfo PEM; ``keys_invalid`` naming ``where`` otherwise."""
    try:
        key = serialization.load_pem_public_key(pem.encode())
    except (ValueError, TypeError, UnicodeError) as exc:
        raise KeyDocumentError("keys_invalid", f"{where}: the public key is not readable PEM") from exc
    except UnsupportedAlgorithm as exc:  # a key algorithm cryptography does not know
        raise KeyDocumentError("keys_invalid", f"{where}: the public key is not Ed25519") from exc
    if not isinstance(key, Ed25519PublicKey):
        raise KeyDocumentError("keys_invalid", f"{where}: the public key is not Ed25519")
    return key


def write_private(path: Path, key: Ed25519PrivateKey) -> None:
    """Write ``key`` to ``path`` (mode 0600, created new: an existing file is never overwritten)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise KeyDocumentError("keys_unwritable", f"cannot create the private key file {path}: {exc.strerror}") from exc
    with os.fdopen(fd, "wb") as out:
        out.write(private_pem(key))
        out.flush()
        os.fsync(out.fileno())
