"""Credentialed checks: the owner's headers reach the probed origin only, and their values nowhere else.

A canary value is sent as the credential and searched for in everything the service writes:
the answer, every log record, the metrics, the store (embedded and Redis), the badge path.
"""

from __future__ import annotations

import base64
import concurrent.futures
import json
import logging
import socket
import subprocess
import sys
import uuid
from typing import Any

import httpx2
import pytest
import redis

from app.http import create_app
from app.settings import Settings
from tests.conftest import Service, reason_of
from tests.servers.raw import RawServer, Request, send, send_json
from tests.servers.raw_mcp import MiniMcp
from tests.servers.redis_server import shared_redis_url
from tests.servers.uvicorn_thread import serve

CANARY = "Bearer canary-7f3a9c1e5d2b4068a1f0"
SECRET_PART = "canary-7f3a9c1e5d2b4068a1f0"
FREE = {"X-Free-Pool": "1"}


class Gated(MiniMcp):
    """An MCP server behind a bearer token, publishing protected resource metadata."""

    def __call__(self, request: Request, conn: socket.socket) -> bool | None:
        if request.headers.get("authorization") != CANARY:
            challenge = 'Bearer resource_metadata="/.well-known/oauth-protected-resource/mcp"'
            send(conn, 401, {"www-authenticate": challenge})
            return None
        return super().__call__(request, conn)


@pytest.fixture
def gated(raw: RawServer) -> RawServer:
    raw.routes["/mcp"] = Gated(tools=["alpha", "beta", "gamma"])

    @raw.route("/.well-known/oauth-protected-resource/mcp")
    def metadata(request: Request, conn: socket.socket) -> None:
        send_json(conn, 200, {"resource": raw.url("/mcp"), "authorization_servers": [raw.url("/as")]})

    return raw


def check(base: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> httpx2.Response:
    return httpx2.post(f"{base}/v1/mcp/check", json=body, headers=headers or FREE, timeout=30)


def test_credentialed_check_reaches_the_server_behind_its_sign_in(
    service: Service, gated: RawServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with service() as base:
        anonymous = check(base, {"url": gated.url("/mcp")})
        signed = check(base, {"url": gated.url("/mcp"), "headers": {"Authorization": CANARY, "X-Tenant": "t1"}})
        metrics = httpx2.get(f"{base}/metrics", timeout=10).text
    assert anonymous.json()["status"] == "auth" and anonymous.json()["credentialed"] is False
    result = signed.json()
    assert (result["status"], result["tools"]["count"], result["credentialed"]) == ("ok", 3, True)
    assert result["credential_headers"] == ["Authorization", "X-Tenant"]
    # the headers went to the probed URL on every request of the signed check, never to metadata URLs
    to_mcp = [r for r in gated.seen if r.path == "/mcp" and r.headers.get("authorization") == CANARY]
    assert {r.message.get("method") for r in to_mcp} >= {"initialize", "tools/list", "tools/call"}
    assert all("authorization" not in r.headers for r in gated.seen if r.path.startswith("/.well-known"))
    # the value appears nowhere the service writes
    assert SECRET_PART not in signed.text and SECRET_PART not in anonymous.text
    assert SECRET_PART not in metrics
    logged = "\n".join(f"{r.name} {r.getMessage()} {r.exc_text or ''} {r.args!r}" for r in caplog.records)
    assert SECRET_PART not in logged


def test_credentialed_check_shares_no_probe_and_feeds_no_badge(service: Service, gated: RawServer) -> None:
    url = gated.url("/mcp")
    with service() as base:
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            bodies: list[dict[str, Any]] = [{"url": url}, {"url": url, "headers": {"Authorization": CANARY}}] * 2
            answers = list(pool.map(lambda body: check(base, body), bodies))
        badge = httpx2.get(f"{base}/badge/mcp.json", params={"url": url}, timeout=30)
    anonymous = [a.json() for a, b in zip(answers, bodies, strict=True) if "headers" not in b]
    signed = [a.json() for a, b in zip(answers, bodies, strict=True) if "headers" in b]
    assert {a["status"] for a in anonymous} == {"auth"} and {s["status"] for s in signed} == {"ok"}
    # each credentialed check ran its own handshake
    signed_handshakes = [
        r for r in gated.seen if r.message.get("method") == "initialize" and r.headers.get("authorization") == CANARY
    ]
    assert len(signed_handshakes) == 2
    assert badge.json()["message"] == "auth required"  # the badge probed anonymously


def test_credentialed_values_are_never_stored_in_redis(service: Service, gated: RawServer) -> None:
    redis_url, namespace = shared_redis_url(), f"test-{uuid.uuid4().hex[:12]}:"
    with service(redis_url=redis_url, redis_namespace=namespace) as base:
        result = check(base, {"url": gated.url("/mcp"), "headers": {"Authorization": CANARY}})
        assert result.json()["status"] == "ok"
        client = redis.Redis.from_url(redis_url)
        keys = list(client.scan_iter(f"{namespace}*"))
        assert keys, "the check left its counters in Redis"
        for name in keys:
            dumped = client.dump(name)
            assert isinstance(name, bytes) and (dumped is None or isinstance(dumped, bytes))
            assert SECRET_PART.encode() not in name + (dumped or b""), name
        assert not [k for k in keys if b"flight" in k and b"result" in k]  # nothing published for others


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({"Authorization": "Bearer x\r\nX-Injected: 1" + SECRET_PART}, "header_value_invalid"),
        ({"Authorization": SECRET_PART + "\u00e9"}, "header_value_invalid"),
        ({"Host": SECRET_PART}, "header_not_allowed"),
        ({"Mcp-Session-Id": SECRET_PART}, "header_not_allowed"),
        ({"Bad Name": SECRET_PART}, "header_name_invalid"),
        ({"authorization": "a", "Authorization": SECRET_PART}, "header_duplicate"),
        ({f"X-H{i}": SECRET_PART for i in range(9)}, "too_many_headers"),
        ({f"X-H{i}": SECRET_PART for i in range(20)}, "too_many_headers"),
    ],
)
def test_refused_credentials_are_422_and_never_echoed(
    service: Service, gated: RawServer, headers: dict[str, str], reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with service(free_pool_per_ip=3) as base:
        response = check(base, {"url": gated.url("/mcp"), "headers": headers})
        after = check(base, {"url": gated.url("/mcp")})
    assert (response.status_code, reason_of(response)) == (422, reason)
    assert SECRET_PART not in response.text
    assert SECRET_PART not in "\n".join(r.getMessage() for r in caplog.records)
    assert after.headers["x-free-pool-remaining"] == "2"  # the refused request drew nothing
    assert not [r for r in gated.seen if SECRET_PART in json.dumps(r.headers)]


def test_non_string_header_values_are_invalid_body(service: Service, gated: RawServer) -> None:
    with service() as base:
        typed = check(base, {"url": gated.url("/mcp"), "headers": {"Authorization": 7}})
    assert (typed.status_code, reason_of(typed)) == (422, "invalid_body")


def test_a_header_named_twice_in_the_json_is_refused_not_silently_chosen(service: Service, gated: RawServer) -> None:
    url, other = json.dumps(gated.url("/mcp")), json.dumps(gated.url("/other"))
    body = f'{{"url": {url}, "headers": {{"Authorization": "a", "Authorization": {json.dumps(CANARY)}}}}}'
    twice_url = f'{{"url": {url}, "url": {other}}}'

    with service() as base:
        headers = {"content-type": "application/json", **FREE}
        dup = httpx2.post(f"{base}/v1/mcp/check", content=body, headers=headers, timeout=30)
        url_twice = httpx2.post(f"{base}/v1/mcp/check", content=twice_url, headers=headers, timeout=30)
    assert (dup.status_code, reason_of(dup)) == (422, "header_duplicate") and SECRET_PART not in dup.text
    assert (url_twice.status_code, reason_of(url_twice)) == (422, "invalid_body")
    assert not gated.seen


def test_cli_header_is_sent_and_never_printed(gated: RawServer) -> None:
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "app",
            "check",
            gated.url("/mcp"),
            "--allow-private",
            "--header",
            f"Authorization: {CANARY}",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert "credentialed with Authorization" in completed.stdout
    assert SECRET_PART not in completed.stdout + completed.stderr


def test_credentialed_values_are_never_in_the_embedded_store(gated: RawServer) -> None:
    settings = Settings(allow_private=True, probe_timeout_s=8.0, step_timeout_s=3.0, host_start_interval_s=0.0)
    app = create_app(settings)
    with serve(app, proxy_headers=False) as port:
        base = f"http://127.0.0.1:{port}"
        result = check(base, {"url": gated.url("/mcp"), "headers": {"Authorization": CANARY}})
        assert result.json()["credentialed"] is True
        store = app.state.services.store
        memory = getattr(store, "_values", None)
        assert isinstance(memory, dict) and memory, "the check left its counters in the store"
        dumped = repr(memory) + repr(getattr(store, "_slots", {}))
        assert SECRET_PART not in dumped
        assert not [k for k in memory if "flight" in k and k.endswith(":result")]  # nothing published for others


def test_a_server_that_echoes_the_credential_does_not_get_it_into_the_answer(service: Service, raw: RawServer) -> None:
    class Echo(MiniMcp):
        token = ""

        def __call__(self, request: Request, conn: socket.socket) -> bool | None:
            Echo.token = request.headers.get("authorization", "")
            return super().__call__(request, conn)

        def _result(self, method: object) -> dict[str, Any]:
            result = super()._result(method)
            if method == "initialize":
                result["serverInfo"] = {"name": Echo.token, "version": Echo.token.split(" ")[-1]}
                result["instructions"] = f"you sent {Echo.token}"
            if method == "tools/list":
                result["tools"].append({"name": "t", "description": f"token {Echo.token.split(' ')[-1]}"})
            return result

    raw.routes["/mcp"] = Echo()
    with service() as base:
        body = {"url": raw.url("/mcp"), "headers": {"Authorization": CANARY}, "include": ["tools"]}
        answer = check(base, body)
    assert answer.status_code == 200 and answer.json()["status"] == "ok"
    assert SECRET_PART not in answer.text
    assert answer.json()["server"]["name"] == "[credential]"  # the whole value, longest match first


class EchoingLong(MiniMcp):
    """Copies the caller's long token into its name (cut at 128 by the probe), a capability name,
    a value under a member called ``id`` and a schema property name."""

    def __call__(self, request: Request, conn: socket.socket) -> bool | None:
        self.token = request.headers.get("authorization", "").partition(" ")[2]
        return super().__call__(request, conn)

    def _result(self, method: object) -> dict[str, Any]:
        result = super()._result(method)
        if method == "initialize":
            result["serverInfo"]["name"] = f"hi {self.token}"
            result["capabilities"]["experimental"] = {self.token: {"id": self.token}}
        if method == "tools/list":
            schema = {"type": "object", "properties": {self.token: {"type": "string"}}}
            result["tools"].append({"name": "whoami", "description": f"you are {self.token}", "inputSchema": schema})
        return result


def test_regression_a_long_echoed_token_is_redacted_even_cut_short_and_in_names(
    service: Service, raw: RawServer
) -> None:
    """The probe cut the echoed name to 128 characters before redaction looked for the whole
    token, so its first 127 characters were served, signed and stored; names and values under
    members called ``id`` were never searched."""
    token = "eyJ" + "".join(f"{i:03d}abcDEF" for i in range(90))  # 813 characters, JWT-like
    raw.routes["/mcp"] = EchoingLong()
    with service() as base:
        answer = check(
            base, {"url": raw.url("/mcp"), "include": ["tools"], "headers": {"Authorization": f"Bearer {token}"}}
        )
    assert answer.status_code == 200 and answer.json()["credentialed"] is True
    payload = base64.b64decode(answer.json()["attestation"]["payload"]).decode()
    for text in (answer.text, payload):
        for i in range(len(token) - 12):
            assert token[i : i + 12] not in text, (i, text[:300])
    assert "[credential]" in answer.json()["server"]["name"]


class EchoingForms(MiniMcp):
    """Copies the caller's token into its text in the forms an exact search misses."""

    def __call__(self, request: Request, conn: socket.socket) -> bool | None:
        self.token = request.headers.get("authorization", "").partition(" ")[2]
        return super().__call__(request, conn)

    def _result(self, method: object) -> dict[str, Any]:
        result = super()._result(method)
        token = self.token
        if method == "initialize":
            result["serverInfo"] = {"name": token[:10], "version": token[10:], "title": token.upper()}
            result["instructions"] = f"reversed {token[::-1]}; spaced {' '.join(token)}"
        if method == "tools/list":
            forms = {
                "b64": base64.b64encode(token.encode()).decode(),
                "b64url": base64.urlsafe_b64encode(b"~" + token.encode()).decode().rstrip("="),
                "hex": token.encode().hex(),
                "pct": "".join(f"%{b:02x}" for b in token.encode()),
            }
            result["tools"] += [{"name": name, "description": f"see {form}"} for name, form in forms.items()]
        return result


def test_a_server_that_echoes_the_credential_re_encoded_or_split_gets_no_form_of_it_into_the_answer(
    service: Service, raw: RawServer
) -> None:
    """Regression: the token upper-cased, reversed, base64, hex, percent-encoded, spaced out or
    split into pieces under 12 characters across ``name`` and ``version`` was served, and the
    upper-cased and split forms were signed and served again by ``/v1/attestations/{id}``."""
    from app.suite.redaction import Secrets

    token = "sk_live_5Hq8Zr2Wm7Xc4Vb9"
    headers = {"Authorization": f"Bearer {token}"}
    raw.routes["/mcp"] = EchoingForms()
    with service() as base:
        answer = check(base, {"url": raw.url("/mcp"), "include": ["tools"], "headers": headers})
        by_id = httpx2.get(f"{base}/v1/attestations/{answer.json()['attestation_id']}", timeout=10)
    assert answer.status_code == 200 and answer.json()["credentialed"] is True
    served = answer.json()
    statement = json.loads(base64.b64decode(served["attestation"]["payload"]))
    secrets = Secrets(headers.items())

    def strings(value: Any) -> list[str]:
        if isinstance(value, dict):
            return [s for k, v in value.items() for s in [k, *strings(v)]]
        if isinstance(value, list):
            return [s for v in value for s in strings(v)]
        return [value] if isinstance(value, str) else []

    leaked = [text for text in strings(served | {"attestation": None}) + strings(statement) if secrets.found_in(text)]
    assert leaked == []
    assert served["server"] == {"name": "[credential]", "version": "[credential]", "title": "[credential]"}
    assert {t["name"]: t["description"] for t in served["tool_definitions"] if t["name"] in ("b64", "hex")} == {
        "b64": "[credential]",
        "hex": "[credential]",
    }
    assert statement["predicate"]["server"] is None  # a credentialed statement keeps no server text
    assert (by_id.status_code, reason_of(by_id)) == (404, "attestation_not_found")  # the caller's alone
