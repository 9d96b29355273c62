"""Signed results cross-verify with securesystemslib, an independent DSSE and Ed25519 implementation.

Both directions: an envelope the service signed for a real check verifies with
securesystemslib's :class:`~securesystemslib.dsse.Envelope` and its Ed25519 key (and a tampered
one does not); an envelope securesystemslib signed is accepted by our verifier and by
``mcp-sonde verify``. The Pre-Authentication Encodings of the three implementations (the
signer's, the verifier's, securesystemslib's ``Envelope.pae``) are byte for byte the same.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from securesystemslib.dsse import Envelope
from securesystemslib.exceptions import VerificationError
from securesystemslib.signer import CryptoSigner, SSlibKey

from app.attest import dsse
from app.attest.verify import pae as verifier_pae
from app.attest.verify.keydoc import parse_keys
from app.attest.verify.reasons import VerificationFailed
from app.attest.verify.verifier import verify
from app.canonical import canonical_bytes
from app.cli import main
from tests.attest import forge
from tests.conftest import Service

FREE = {"X-Free-Pool": "1"}
IN_TOTO = "application/vnd.in-toto+json"


def sslib_key(keyid: str, public_pem: str) -> SSlibKey:
    """A key document entry's public key in securesystemslib's form (raw 32 bytes as 64 hex)."""
    public = serialization.load_pem_public_key(public_pem.encode())
    assert isinstance(public, Ed25519PublicKey)
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    assert len(raw.hex()) == 64
    return SSlibKey(keyid, "ed25519", "ed25519", {"public": raw.hex()})


def our_keyid(public: Ed25519PublicKey) -> str:
    """The key id rule, written out here: first 16 hex of the SHA-256 of the SPKI DER."""
    der = public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return hashlib.sha256(der).hexdigest()[:16]


def sslib_verifies(envelope: dict[str, Any], key: SSlibKey) -> bool:
    """Whether securesystemslib accepts ``envelope`` with ``key`` at threshold 1 (its
    ``from_dict`` rewrites the signatures in place, so it gets a copy)."""
    try:
        accepted = Envelope.from_dict(copy.deepcopy(envelope)).verify([key], 1)
    except VerificationError:
        return False
    assert list(accepted) == [key.keyid]
    return True


@pytest.fixture
def served_check(service: Service, sdk_base: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A real free check of the ``stateless-json`` fixture server and the service's key document."""
    with service() as base:
        answer = httpx2.post(
            f"{base}/v1/mcp/check", json={"url": f"{sdk_base}/stateless-json/mcp"}, headers=FREE, timeout=30
        )
        assert answer.status_code == 200, answer.text
        keys = httpx2.get(f"{base}/.well-known/mcp-sonde-keys.json", timeout=10)
        assert keys.status_code == 200
    return answer.json(), keys.json()


def _served_key(served_check: tuple[dict[str, Any], dict[str, Any]]) -> tuple[dict[str, Any], SSlibKey]:
    answer, document = served_check
    envelope: dict[str, Any] = answer["attestation"]
    keyid = envelope["signatures"][0]["keyid"]
    entry = next(entry for entry in document["keys"] if entry["keyid"] == keyid)
    return envelope, sslib_key(keyid, entry["public_key"])


def test_a_served_envelope_verifies_with_securesystemslib(served_check: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """The envelope of a real served check verifies with securesystemslib's DSSE Envelope and
    Ed25519 key built from the published key document, and its payload is the statement."""
    envelope, key = _served_key(served_check)
    assert envelope["payloadType"] == IN_TOTO
    assert sslib_verifies(envelope, key)
    parsed = Envelope.from_dict(copy.deepcopy(envelope))
    statement = json.loads(parsed.payload)
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    assert statement["predicate"]["status"] == "ok"
    assert statement["subject"][0]["digest"]["sha256"] == served_check[0]["schema_fingerprint"]


def test_a_served_envelope_with_one_payload_byte_changed_fails_securesystemslib(
    served_check: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    """securesystemslib refuses the served envelope once one payload byte changed (the signature
    covers the payload), and once the signature itself has one bit flipped."""
    envelope, key = _served_key(served_check)
    payload = bytearray(base64.b64decode(envelope["payload"]))
    at = payload.index(b'"status":"ok"') + len(b'"status":"')
    payload[at : at + 2] = b"OK"
    tampered = dict(envelope, payload=base64.b64encode(bytes(payload)).decode())
    assert not sslib_verifies(tampered, key)
    sig = bytearray(base64.b64decode(envelope["signatures"][0]["sig"]))
    sig[0] ^= 1
    flipped = dict(envelope, signatures=[{"keyid": key.keyid, "sig": base64.b64encode(bytes(sig)).decode()}])
    assert not sslib_verifies(flipped, key)
    assert sslib_verifies(envelope, key)  # (the untouched envelope still does: the copies were apart)


def test_a_served_envelope_fails_securesystemslib_with_another_key(
    served_check: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    """A different Ed25519 key under the same key id does not verify the served envelope."""
    envelope, key = _served_key(served_check)
    other = Ed25519PrivateKey.generate().public_key()
    impostor = SSlibKey(key.keyid, "ed25519", "ed25519", {"public": other.public_bytes_raw().hex()})
    assert not sslib_verifies(envelope, impostor)


def _sslib_signed(key: forge.Key, payload: bytes) -> dict[str, Any]:
    """An envelope of ``payload`` signed by securesystemslib's CryptoSigner with ``key``."""
    public = SSlibKey.from_crypto(key.private.public_key(), keyid=our_keyid(key.private.public_key()))
    signer = CryptoSigner(key.private, public)
    envelope = Envelope(payload, IN_TOTO, {})
    envelope.sign(signer)
    signed: dict[str, Any] = envelope.to_dict()
    return signed


def test_our_verifier_accepts_an_envelope_securesystemslib_signed() -> None:
    """securesystemslib signs the canonical statement (CryptoSigner, a fresh Ed25519 key, our
    key id rule); our verifier accepts it, and the signature is the very one our signer makes
    (Ed25519 is deterministic and both sign the same PAE bytes)."""
    key = forge.make_key()
    assert our_keyid(key.private.public_key()) == key.keyid
    payload = canonical_bytes(forge.statement())
    envelope = _sslib_signed(key, payload)
    assert envelope["signatures"][0]["keyid"] == key.keyid
    verified = verify(forge.dumps(envelope), parse_keys(forge.keys_document(key)))
    assert [listed.keyid for listed in verified.keys] == [key.keyid]
    assert verified.statement == forge.statement()
    assert not verified.result_checked
    assert envelope["signatures"][0]["sig"] == forge.envelope(payload, key)["signatures"][0]["sig"]


def test_our_verifier_refuses_a_securesystemslib_envelope_signed_by_an_unlisted_key() -> None:
    """An envelope securesystemslib signed with a key the document does not list is refused
    (``key_unknown``), so the acceptance above is the key's doing."""
    key, listed = forge.make_key(), forge.make_key()
    envelope = _sslib_signed(key, canonical_bytes(forge.statement()))
    with pytest.raises(VerificationFailed) as failure:
        verify(forge.dumps(envelope), parse_keys(forge.keys_document(listed)))
    assert failure.value.reason == "key_unknown"


def test_mcp_sonde_verify_accepts_an_envelope_securesystemslib_signed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``mcp-sonde verify`` exits 0 and says VERIFIED, naming the key, for a securesystemslib envelope."""
    key = forge.make_key()
    envelope_file, keys_file = tmp_path / "envelope.json", tmp_path / "keys.json"
    envelope_file.write_bytes(forge.dumps(_sslib_signed(key, canonical_bytes(forge.statement()))))
    keys_file.write_bytes(forge.keys_document(key))
    assert main(["verify", str(envelope_file), "--keys", str(keys_file)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"VERIFIED: signed by key {key.keyid}")
    assert "status:       ok (ok)" in out


PAYLOAD_TYPES = [IN_TOTO, "", "text/plain", "http://example.com/HelloWorld", "application/vnd.ünïcode+json"]
PAYLOADS = [b"", b"hello world", b" ", b"\x00\xff\x80binary\r\n", "ünïcode €".encode(), b"x" * 9, b"y" * 10,
            b"z" * 100_000, b"DSSEv1 0  0 "]  # fmt: skip


@pytest.mark.parametrize("payload_type", PAYLOAD_TYPES)
@pytest.mark.parametrize("payload", PAYLOADS, ids=lambda p: f"{len(p)}B")
def test_pae_bytes_are_those_of_securesystemslib(payload_type: str, payload: bytes) -> None:
    """The signer's PAE, the verifier's PAE and securesystemslib's ``Envelope.pae`` give the same
    bytes, whose lengths are byte lengths (a non-ASCII type, lengths across a digit boundary)."""
    theirs = Envelope(payload, payload_type, {}).pae()
    assert dsse.pae(payload_type, payload) == theirs
    assert verifier_pae.encode(payload_type, payload) == theirs
    kind = payload_type.encode()
    assert theirs == b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


def test_pae_of_the_dsse_specification_example() -> None:
    """The example of DSSE's protocol.md: all three encodings give its exact bytes."""
    expected = b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    theirs = Envelope(b"hello world", "http://example.com/HelloWorld", {}).pae()
    assert theirs == expected
    assert dsse.pae("http://example.com/HelloWorld", b"hello world") == expected
    assert verifier_pae.encode("http://example.com/HelloWorld", b"hello world") == expected
