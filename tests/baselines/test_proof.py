"""The proof of control's token and document: a token names one server and one tool set under
one key, the document is read strictly, and the URL is the stored URL's host (and port) over https."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from app.baselines.proof import (
    MAX_TOKENS,
    ProofRefused,
    baseline_token,
    holds,
    proof_document,
    proof_key,
    proof_url,
)

SERVER, OTHER_SERVER = "6b1f0c2e9d4a7b3c5e8f1a2d", "0" * 24
TOOLS, OTHER_TOOLS = "a" * 64, "b" * 64


def test_a_token_names_one_server_and_one_tool_set_under_one_key() -> None:
    signing = Ed25519PrivateKey.generate()
    key = proof_key(signing)
    assert key == proof_key(signing) and len(key) == 32
    assert key != proof_key(Ed25519PrivateKey.generate())
    assert key != signing.private_bytes_raw()  # derived, never the signing key itself
    token = baseline_token(key, SERVER, TOOLS)
    message = f"mcp-sonde baseline v1\n{SERVER}\n{TOOLS}".encode()
    assert token == hmac.new(key, message, hashlib.sha256).hexdigest()
    others = {baseline_token(key, OTHER_SERVER, TOOLS), baseline_token(key, SERVER, OTHER_TOOLS),
              baseline_token(proof_key(Ed25519PrivateKey.generate()), SERVER, TOOLS)}  # fmt: skip
    assert token not in others and len(others) == 3


def test_the_document_lists_the_token() -> None:
    token = "c" * 64
    holds(json.dumps(proof_document("d" * 64, token)).encode(), token)
    holds(json.dumps({"mcp-sonde": {"baseline_tokens": [token], "later": 1}, "other": []}).encode(), token)


@pytest.mark.parametrize(
    "body",
    [
        b"<html>not json</html>",
        b"[]",
        b'{"mcp-sonde": []}',
        b'{"mcp-sonde": {"baseline_tokens": "cccc"}}',
        b'{"mcp-sonde": {"baseline_tokens": [1]}}',
        b'{"mcp-sonde": {"baseline_tokens": ["CCCC"]}}',
        json.dumps(proof_document(*["c" * 64] * (MAX_TOKENS + 1))).encode(),
        json.dumps(proof_document("c" * 63)).encode(),
        b'{"mcp-sonde": {"baseline_tokens": []}}',
        b"[" * 100_000,
    ],
    ids=[
        "html",
        "array",
        "section not an object",
        "tokens not a list",
        "not strings",
        "other case",
        "too many",
        "a prefix",
        "empty",
        "deep",
    ],
)
def test_anything_else_is_proof_invalid(body: bytes) -> None:
    with pytest.raises(ProofRefused) as refused:
        holds(body, "c" * 64)
    assert refused.value.reason == "proof_invalid"


@pytest.mark.parametrize(
    ("url", "where"),
    [
        ("https://mcp.example.com/mcp", "https://mcp.example.com/.well-known/mcp-sonde.json"),
        ("https://mcp.example.com:443/v1/mcp", "https://mcp.example.com/.well-known/mcp-sonde.json"),
        ("https://mcp.example.com:8443/mcp", "https://mcp.example.com:8443/.well-known/mcp-sonde.json"),
        ("http://127.0.0.1:8123/mcp", "https://127.0.0.1:8123/.well-known/mcp-sonde.json"),
        ("https://[2001:db8::1]/mcp", "https://[2001:db8::1]/.well-known/mcp-sonde.json"),
    ],
)
def test_the_document_is_on_the_servers_host_over_https(url: str, where: str) -> None:
    assert proof_url(url) == where
