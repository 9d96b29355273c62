"""Keys of an algorithm the ``cryptography`` package does not know are refused with a reason.

``load_pem_public_key`` and ``load_pem_private_key`` raise ``UnsupportedAlgorithm`` (not a
``ValueError``) for a key whose algorithm identifier they do not know: a PEM file holding one
made ``serve`` and ``mcp-sonde verify`` stop with a traceback instead of their reason and code.
"""

from __future__ import annotations

import base64
import json

import pytest

from app.attest.errors import KeyDocumentError
from app.attest.keys import load_private, load_public, private_pem, public_pem
from app.attest.verify.keydoc import parse_keys
from app.attest.verify.reasons import VerificationFailed
from tests.attest import forge

ED25519_OID = bytes.fromhex("06032b6570")  # 1.3.101.112
UNKNOWN_OID = bytes.fromhex("06032b655e")  # 1.3.101.94, no algorithm


def unknown_algorithm(pem: str) -> str:
    """``pem`` (one PEM block) with its Ed25519 algorithm identifier replaced by an unknown one."""
    lines = pem.strip().splitlines()
    der = base64.b64decode("".join(lines[1:-1]))
    assert der.count(ED25519_OID) == 1
    body = base64.b64encode(der.replace(ED25519_OID, UNKNOWN_OID)).decode()
    return "\n".join([lines[0], body, lines[-1]]) + "\n"


def test_a_private_key_of_an_unknown_algorithm_is_private_key_invalid() -> None:
    pem = unknown_algorithm(private_pem(forge.make_key().private).decode())
    with pytest.raises(KeyDocumentError) as caught:
        load_private(pem.encode(), "signing.pem")
    assert caught.value.reason == "private_key_invalid"


def test_a_public_key_of_an_unknown_algorithm_is_keys_invalid() -> None:
    pem = unknown_algorithm(public_pem(forge.make_key().private.public_key()))
    with pytest.raises(KeyDocumentError) as caught:
        load_public(pem, "keys.json")
    assert caught.value.reason == "keys_invalid"


def test_a_listed_key_of_an_unknown_algorithm_is_keys_unavailable_to_the_verifier() -> None:
    document = json.loads(forge.keys_document(forge.make_key()))
    document["keys"][0]["public_key"] = unknown_algorithm(document["keys"][0]["public_key"])
    with pytest.raises(VerificationFailed) as caught:
        parse_keys(json.dumps(document).encode())
    assert caught.value.reason == "keys_unavailable"
