"""Every served full check carries a DSSE envelope that verifies: the HTTP route and the MCP tool,
free, credentialed and unresolved; what is not a served full check carries none. The key
document, stored envelopes and the schemas are served."""

from __future__ import annotations

import base64
import hashlib
import json
import socket
from importlib import resources
from typing import Any

import anyio
import httpx2
import pytest

from app.attest.verify.keydoc import parse_keys
from app.attest.verify.reasons import VerificationFailed
from app.attest.verify.verifier import verify
from app.guard import ResolutionFailed
from app.guard.addresses import IPAddress
from tests.conftest import Service, reason_of
from tests.http.mcp.test_tool import call
from tests.servers.raw import RawServer, Request
from tests.servers.raw_mcp import MiniMcp

FREE = {"X-Free-Pool": "1"}
CANARY = "Bearer canary-5b1e9d7c3a2f4e60"


def check(base: str, body: dict[str, Any]) -> httpx2.Response:
    return httpx2.post(f"{base}/v1/mcp/check", json=body, headers=FREE, timeout=30)


def statement_of(envelope: dict[str, Any]) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(base64.b64decode(envelope["payload"]))
    return value


def keys_of(base: str) -> bytes:
    response = httpx2.get(f"{base}/.well-known/mcp-sonde-keys.json", timeout=10)
    assert response.status_code == 200 and response.headers["cache-control"] == "public, max-age=300"
    return response.content


def test_a_free_check_is_signed_and_verifies(service: Service, sdk_base: str) -> None:
    with service() as base:
        answer = check(base, {"url": f"{sdk_base}/stateless-json/mcp"})
        assert answer.status_code == 200
        keys = keys_of(base)
        stored = httpx2.get(f"{base}/v1/attestations/{answer.json()['attestation_id']}", timeout=10)
    result = answer.json()
    envelope = result["attestation"]
    statement = statement_of(envelope)
    assert statement["predicate"]["status"] == "ok" and statement["predicate"]["coverage"] == {
        "level": "full",
        "reason": None,
    }
    assert statement["subject"] == [{"name": result["url"], "digest": {"sha256": result["schema_fingerprint"]}}]
    assert result["attestation_id"] == hashlib.sha256(base64.b64decode(envelope["payload"])).hexdigest()
    verified = verify(answer.content, parse_keys(keys))
    assert verified.result_checked
    assert stored.status_code == 200 and stored.json() == {"id": result["attestation_id"], "envelope": envelope}
    assert "immutable" in stored.headers["cache-control"]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_mcp_tool_result_is_signed(service: Service, sdk_base: str, mode: str) -> None:
    with service() as base:
        result = anyio.run(
            lambda: call(base, "check_mcp_server", {"url": f"{sdk_base}/stateless-json/mcp"}, mode=mode, headers=FREE)
        )
        keys = keys_of(base)
    assert not result.is_error and isinstance(result.structured_content, dict)
    answer = result.structured_content
    assert verify(json.dumps(answer).encode(), parse_keys(keys)).result_checked
    assert json.loads(result.content[0].text)["attestation"] == answer["attestation"]  # type: ignore[union-attr]


class Echoing(MiniMcp):
    """Behind a bearer token, and copies the token into its name and a tool name."""

    def __call__(self, request: Request, conn: socket.socket) -> bool | None:
        self.token = request.headers.get("authorization", "")
        if self.token != CANARY:
            from tests.servers.raw import send

            send(conn, 401, {"www-authenticate": "Bearer"})
            return None
        return super().__call__(request, conn)

    def _result(self, method: object) -> dict[str, Any]:
        result = super()._result(method)
        if method == "initialize":
            result["serverInfo"]["name"] = f"echo {self.token}"
        if method == "tools/list":
            result["tools"].append({"name": f"t {self.token}", "inputSchema": {"type": "object"}})
        return result


def test_a_credentialed_check_is_signed_as_such_and_holds_no_credential(service: Service, raw: RawServer) -> None:
    raw.routes["/mcp"] = Echoing()
    with service() as base:
        anonymous = check(base, {"url": raw.url("/mcp")})
        signed = check(base, {"url": raw.url("/mcp"), "headers": {"Authorization": CANARY, "X-Tenant": "t1"}})
        by_id = httpx2.get(f"{base}/v1/attestations/{signed.json()['attestation_id']}", timeout=10)
        keys = keys_of(base)
    gated = statement_of(anonymous.json()["attestation"])["predicate"]
    assert (gated["coverage"], gated["credentialed"]) == ({"level": "auth_gated", "reason": "auth_required"}, False)
    predicate = statement_of(signed.json()["attestation"])["predicate"]
    assert (predicate["credentialed"], predicate["credential_headers"]) == (True, ["Authorization", "X-Tenant"])
    assert predicate["status"] == "ok" and predicate["server"] is None  # no server text at all
    assert signed.json()["server"]["name"] == "[credential]"
    assert by_id.status_code == 404  # returned to its caller, not served by id
    secret = CANARY.split()[1]
    for text in (signed.content, base64.b64decode(signed.json()["attestation"]["payload"])):
        assert secret.encode() not in text
    assert verify(signed.content, parse_keys(keys)).predicate["credentialed"] is True


class NoSuchHost:
    """A resolver that answers NXDOMAIN for every name."""

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        raise ResolutionFailed("dns_nxdomain", "no such host")


def test_a_host_that_does_not_resolve_is_a_signed_result(service: Service) -> None:
    with service(resolver=NoSuchHost()) as base:
        answer = check(base, {"url": "http://mcp.nowhere.example:8080/mcp?key=abc"})
        keys = keys_of(base)
    result = answer.json()
    assert (result["status"], result["reason"]) == ("dns", "dns_nxdomain")
    verified = verify(answer.content, parse_keys(keys))
    predicate = verified.predicate
    assert predicate["coverage"] == {"level": "partial", "reason": "dns_nxdomain"} and predicate["addresses"] == []
    # the query string is bound by its digest, never signed or stored in the clear
    assert predicate["url"] == "http://mcp.nowhere.example:8080/mcp"
    assert predicate["url_query_sha256"] == hashlib.sha256(b"key=abc").hexdigest()
    assert verified.statement["subject"][0]["digest"]["sha256"] == predicate["result_sha256"]
    assert predicate["subject_digest"] == "result" and b"key=abc" not in base64.b64decode(
        result["attestation"]["payload"]
    )


def test_refusals_and_badges_carry_no_attestation(service: Service, sdk_base: str) -> None:
    with service() as base:
        refused = httpx2.post(f"{base}/v1/mcp/check", json={"url": "ftp://x/mcp"}, headers=FREE, timeout=10)
        badge = httpx2.get(f"{base}/badge/mcp.json", params={"url": f"{sdk_base}/stateless-json/mcp"}, timeout=30)
    assert refused.status_code == 422 and "attestation" not in refused.json()
    assert badge.status_code == 200 and "attestation" not in badge.text


def test_unknown_and_malformed_attestation_ids_are_404(service: Service) -> None:
    with service() as base:
        answers = [httpx2.get(f"{base}/v1/attestations/{i}", timeout=10) for i in ("0" * 64, "abc", "g" * 64, "A" * 64)]
    assert [(a.status_code, reason_of(a)) for a in answers] == [(404, "attestation_not_found")] * 4


def test_the_schemas_are_served_as_kept_in_the_repository(service: Service) -> None:
    with service() as base:
        for name in ("check-result-v1.schema.json", "statement-v1.schema.json"):
            served = httpx2.get(f"{base}/schemas/{name}", timeout=10)
            assert served.headers["content-type"] == "application/schema+json"
            assert served.content == resources.files("app.attest").joinpath("schemas", name).read_bytes()
        missing = httpx2.get(f"{base}/schemas/other.json", timeout=10)
    assert (missing.status_code, reason_of(missing)) == (404, "not_found")


def test_a_large_result_is_signed_off_the_event_loop_and_verifies(service: Service, raw: RawServer) -> None:
    from app.checking.flow import INLINE_SIGN_BYTES

    raw.routes["/mcp"] = MiniMcp(tools=[f"tool_number_{i:04d}" for i in range(1500)])
    with service() as base:
        answer = httpx2.post(
            f"{base}/v1/mcp/check", json={"url": raw.url("/mcp"), "include": ["tools"]}, headers=FREE, timeout=30
        )
        keys = keys_of(base)
    assert answer.status_code == 200 and len(answer.content) > INLINE_SIGN_BYTES
    assert len(answer.json()["tool_definitions"]) == 1500
    verified = verify(answer.content, parse_keys(keys))
    assert verified.result_checked and verified.predicate["tools"] == {"count": 1500, "complete": True}


class Uncanonical(MiniMcp):
    """Capabilities no canonical form can hold: an integer beyond I-JSON, names equal after NFC,
    a lone surrogate and a run of 100 combining marks."""

    def _result(self, method: object) -> dict[str, Any]:
        result = super()._result(method)
        if method == "initialize":
            result["capabilities"]["experimental"] = {
                "limit": 2**64, "e\u0301": 1, "\u00e9": 2, "odd": "x\ud800", "marks": "a" + "\u0316" * 100,
            }  # fmt: skip
        return result


def test_regression_a_server_cannot_make_its_answer_unsigned_by_digest(service: Service, raw: RawServer) -> None:
    """Such values left the answer without result_sha256, so a tampered answer passed as verified;
    now the answer is served with them made canonical, and the statement signs its digest."""
    raw.routes["/mcp"] = Uncanonical()
    with service() as base:
        answer = check(base, {"url": raw.url("/mcp")})
        keys = keys_of(base)
    assert answer.status_code == 200
    experimental = answer.json()["capabilities"]["experimental"]
    assert experimental["limit"] == str(2**64) and len(experimental) == 4
    verified = verify(answer.content, parse_keys(keys))
    assert verified.result_checked and verified.predicate["result_sha256"] is not None
    tampered = answer.json() | {"instructions": "forged"}
    with pytest.raises(VerificationFailed) as refused:
        verify(json.dumps(tampered).encode(), parse_keys(keys))
    assert refused.value.reason == "result_mismatch"
