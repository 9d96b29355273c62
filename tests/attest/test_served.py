"""Every served full check carries a DSSE envelope that verifies; the key document and stored envelopes are served."""

from __future__ import annotations

import base64
import json

import httpx2

from app.attest.verify.keydoc import parse_keys
from app.attest.verify.verifier import verify
from tests.service.conftest import Service

FREE = {"X-Free-Pool": "1"}


def test_a_free_check_is_signed_and_verifies(service: Service, sdk_base: str) -> None:
    with service() as base:
        answer = httpx2.post(
            f"{base}/v1/mcp/check", json={"url": f"{sdk_base}/stateless-json/mcp"}, headers=FREE, timeout=30
        )
        assert answer.status_code == 200
        keys = httpx2.get(f"{base}/.well-known/mcp-sonde-keys.json").content
        stored = httpx2.get(f"{base}/v1/attestations/{answer.json()['attestation_id']}")
    result = answer.json()
    envelope = result["attestation"]
    statement = json.loads(base64.b64decode(envelope["payload"]))
    assert statement["predicate"]["status"] == "ok"
    assert statement["subject"][0]["digest"]["sha256"] == result["schema_fingerprint"]
    verified = verify(answer.content, parse_keys(keys))
    assert verified.result_checked
    assert stored.status_code == 200 and stored.json()["envelope"] == envelope
