"""The whole service end to end on loopback: real MCP servers, an offline chain, mcp-sonde.

Starts ``@modelcontextprotocol/server-everything`` (Streamable HTTP and legacy HTTP+SSE), the
``mcp`` SDK fixture servers, an ``mcp`` SDK server behind bearer auth publishing protected
resource metadata (RFC 9728), an in-process EVM with a USDC-like token and an x402
facilitator, and mcp-sonde with the development switch on. Then: free-pool checks of every
server over HTTP, one check paid with a test account, the MCP tool (free and paid), the SVG,
PNG and JSON badges, and a summary. Exits 1 if any step gave a wrong answer; stops all it
started. Only loopback addresses are used.

Usage: ``scripts/demo`` (or ``.venv/bin/python -m scripts.demo``).
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import httpx2
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import AnyHttpUrl

from app.http.app import create_app
from app.settings import PaymentNetwork, Settings
from tests.http.mcp.test_tool import call
from tests.payment.chain import PRICE, START_BALANCE, decode, facilitator_app, new_chain, pay
from tests.servers.node import server_everything
from tests.servers.ports import free_port
from tests.servers.sdk_apps import build_app
from tests.servers.uvicorn_thread import serve

FREE = {"X-Free-Pool": "1"}


class Verifier:
    """Accepts one token, ``demo-token``, issued for the server's own resource (RFC 8707)."""

    def __init__(self, resource: str) -> None:
        self.resource = resource

    async def verify_token(self, token: str) -> AccessToken | None:
        if token != "demo-token":
            return None
        return AccessToken(token=token, client_id="demo", scopes=["mcp"], resource=self.resource)


def auth_server(port: int) -> Any:
    """An ``mcp`` SDK server that wants a bearer token and publishes protected resource metadata."""
    server: MCPServer = MCPServer(
        "guarded",
        token_verifier=Verifier(f"http://127.0.0.1:{port}/mcp"),
        auth=AuthSettings(
            issuer_url=AnyHttpUrl("http://127.0.0.1:9/"),  # named, never contacted
            resource_server_url=AnyHttpUrl(f"http://127.0.0.1:{port}/mcp"),
            required_scopes=["mcp"],
            validate_token_resource=True,
        ),
    )

    @server.tool()
    def ping() -> str:
        return "pong"

    return server.streamable_http_app(
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False)
    )


class Demo:
    """Runs the steps and keeps the summary."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, bool, str]] = []

    def step(self, name: str, ok: bool, detail: str) -> None:
        self.rows.append((name, ok, detail))
        print(f"  {'PASS' if ok else 'FAIL'}  {name:<44} {detail}", flush=True)

    def expect(self, name: str, action: Callable[[], tuple[bool, str]]) -> None:
        try:
            ok, detail = action()
        except Exception as exc:  # a step that raised is a wrong answer, reported as such
            ok, detail = False, f"{type(exc).__name__}: {exc}"[:200]
        self.step(name, ok, detail)

    @property
    def failed(self) -> int:
        return sum(1 for _n, ok, _d in self.rows if not ok)


def _start(stack: contextlib.ExitStack) -> dict[str, Any]:
    print("starting servers on 127.0.0.1 ...", flush=True)
    streamable = stack.enter_context(server_everything("streamableHttp"))
    sse = stack.enter_context(server_everything("sse"))
    sdk = stack.enter_context(serve(build_app()))
    guarded_port = free_port()
    stack.enter_context(serve(auth_server(guarded_port), port=guarded_port))
    chain = new_chain()
    facilitator = stack.enter_context(serve(facilitator_app(chain)))
    data = stack.enter_context(tempfile.TemporaryDirectory(prefix="mcp-sonde-demo-"))
    settings = Settings(
        allow_private=True,
        redis_url=None,
        data_dir=Path(data),  # the demo's signing key lives and dies with the demo
        host_start_interval_s=0.0,
        pay_to=chain.pay_to.address,
        payment_networks=[PaymentNetwork(network=chain.network, asset=chain.token.address)],
        facilitator_url=f"http://127.0.0.1:{facilitator}",
    )
    sonde = free_port()
    settings = settings.model_copy(update={"public_url": f"http://127.0.0.1:{sonde}"})
    stack.enter_context(serve(create_app(settings), port=sonde, proxy_headers=False))
    return {
        "sonde": f"http://127.0.0.1:{sonde}",
        "chain": chain,
        "targets": {
            "server-everything (Streamable HTTP)": (f"http://127.0.0.1:{streamable}/mcp", "ok"),
            "server-everything (HTTP+SSE)": (f"http://127.0.0.1:{sse}/sse", "ok"),
            "mcp SDK (stateless JSON)": (f"http://127.0.0.1:{sdk}/stateless-json/mcp", "ok"),
            "mcp SDK (legacy HTTP+SSE)": (f"http://127.0.0.1:{sdk}/legacy-sse/sse", "ok"),
            "mcp SDK behind bearer auth": (f"http://127.0.0.1:{guarded_port}/mcp", "auth"),
            "nothing listening": (f"http://127.0.0.1:{free_port()}/mcp", "unreachable"),
        },
    }


def run(demo: Demo, env: dict[str, Any]) -> None:
    base: str = env["sonde"]
    chain = env["chain"]
    http = httpx2.Client(timeout=30)

    print("\nchecks over HTTP, free pool (POST /v1/mcp/check, X-Free-Pool: 1)")
    for label, (url, expected) in env["targets"].items():

        def check(url: str = url, expected: str = expected) -> tuple[bool, str]:
            answer = http.post(f"{base}/v1/mcp/check", json={"url": url}, headers=FREE)
            result = answer.json()
            detail = f"{result.get('status')} ({result.get('reason')}), {result.get('protocol_version') or '-'}"
            if expected == "ok":
                detail += f", {result['tools']['count']} tools" if result.get("tools") else ""
            if expected == "auth":
                metadata = (result.get("auth") or {}).get("metadata") or {}
                detail += f", resource {metadata.get('resource')}"
                return answer.status_code == 200 and result["status"] == "auth" and bool(metadata), detail
            return answer.status_code == 200 and result["status"] == expected, detail

        demo.expect(label, check)

    target = env["targets"]["mcp SDK (stateless JSON)"][0]
    guarded_url = env["targets"]["mcp SDK behind bearer auth"][0]
    print("\nthe check suite, tool definitions and a credentialed check")

    def suite() -> tuple[bool, str]:
        result = http.post(f"{base}/v1/mcp/check", json={"url": target}, headers=FREE).json()
        states = {c["id"]: c["state"] for c in result["checks"]}
        catalogue = http.get(f"{base}/v1/checks").json()
        same = set(states) == {c["id"] for c in catalogue["catalogue"]["checks"]}
        verified = sum(state == "verified" for state in states.values())
        detail = f"{verified}/{len(states)} verified, schema {result['schema_fingerprint'][:12]}…"
        return same and states["error_taxonomy"] == "verified" and "tool_definitions" not in result, detail

    def definitions() -> tuple[bool, str]:
        body = {"url": target, "include": ["tools"]}
        result = http.post(f"{base}/v1/mcp/check", json=body, headers=FREE).json()
        names = [tool["name"] for tool in result.get("tool_definitions") or []]
        return bool(names) and all("inputSchema" in t for t in result["tool_definitions"]), ", ".join(names)

    def credentialed() -> tuple[bool, str]:
        body = {"url": guarded_url, "headers": {"Authorization": "Bearer demo-token"}}
        answer = http.post(f"{base}/v1/mcp/check", json=body, headers=FREE)
        result = answer.json()
        detail = f"{result.get('status')}, credentialed with {result.get('credential_headers')}"
        clean = "demo-token" not in answer.text
        return result.get("status") == "ok" and result.get("credentialed") is True and clean, detail

    demo.expect("every check of GET /v1/checks judged", suite)
    demo.expect('"include": ["tools"] adds the definitions', definitions)
    demo.expect("credentialed check behind bearer auth", credentialed)

    print("\na paid check (x402 on the offline chain)")

    def paid() -> tuple[bool, str]:
        unpaid = http.post(f"{base}/v1/mcp/check", json={"url": target})
        signature = anyio.run(pay, chain.payer, unpaid.headers["payment-required"])
        answer = http.post(f"{base}/v1/mcp/check", json={"url": target}, headers={"PAYMENT-SIGNATURE": signature})
        receipt = json.loads(base64.b64decode(answer.headers.get("payment-response", "e30=")))
        again = http.post(f"{base}/v1/mcp/check", json={"url": target}, headers={"PAYMENT-SIGNATURE": signature})
        moved = START_BALANCE - chain.balance(chain.payer)
        ok = (
            unpaid.status_code == 402
            and answer.status_code == 200
            and receipt.get("success") is True
            and again.status_code == 402
            and again.json().get("error") == "payment_already_used"
            and moved == PRICE
        )
        return (
            ok,
            f"402 then 200, tx {str(receipt.get('transaction'))[:12]}..., replay refused, {moved / 1e6} USDC moved",
        )

    demo.expect("pay for one check, replay it", paid)

    print("\nsigned results (in-toto statements in DSSE envelopes)")
    keys_url = f"{base}/.well-known/mcp-sonde-keys.json"

    def verified() -> tuple[bool, str]:
        answer = http.post(f"{base}/v1/mcp/check", json={"url": target}, headers=FREE)
        honest = verify_with_cli(answer.content, keys_url)
        document = answer.json()
        payload = bytearray(base64.b64decode(document["attestation"]["payload"]))
        payload[len(payload) // 2] ^= 0x01
        document["attestation"]["payload"] = base64.b64encode(bytes(payload)).decode()
        tampered = verify_with_cli(json.dumps(document).encode(), keys_url)
        stored = http.get(f"{base}/v1/attestations/{answer.json()['attestation_id']}")
        ok = honest[0] == 0 and tampered[0] == 34 and stored.status_code == 200
        return ok, f"mcp-sonde verify: {honest[1]}; one changed payload byte: exit {tampered[0]} (signature_invalid)"

    demo.expect("a free check verifies against the published keys", verified)

    print("\nthe MCP tool at /mcp (mcp SDK client)")

    def tool_free() -> tuple[bool, str]:
        result = anyio.run(lambda: call(base, "check_mcp_server", {"url": target}, headers=FREE))
        document = result.structured_content or {}
        return (not result.is_error and document.get("status") == "ok"), f"status {document.get('status')}"

    def tool_paid() -> tuple[bool, str]:
        unpaid = anyio.run(lambda: call(base, "check_mcp_server", {"url": target}))
        required = base64.b64encode(json.dumps(unpaid.structured_content).encode()).decode()
        payload = decode(anyio.run(pay, chain.payer, required)).model_dump(
            mode="json", by_alias=True, exclude_none=True
        )
        result = anyio.run(lambda: call(base, "check_mcp_server", {"url": target}, meta={"x402/payment": payload}))
        receipt = (result.meta or {}).get("x402/payment-response", {})
        ok = unpaid.is_error and not result.is_error and receipt.get("success") is True
        return ok, f"unpaid -> isError PaymentRequired; paid -> ok, settled {str(receipt.get('transaction'))[:12]}..."

    def tool_badge() -> tuple[bool, str]:
        result = anyio.run(lambda: call(base, "badge_for_mcp_server", {"url": "https://mcp.example.com/mcp"}))
        markdown = (result.structured_content or {}).get("markdown", "")
        ok = not result.is_error and markdown.startswith(f"[![MCP status]({base}/badge/mcp?url=https%3A%2F%2Fmcp.")
        return ok, markdown[:60] + "..."

    def self_check() -> tuple[bool, str]:
        answer = http.post(f"{base}/v1/mcp/check", json={"url": f"{base}/mcp"}, headers=FREE).json()
        names = (answer.get("tools") or {}).get("names") or []
        return answer.get("status") == "ok" and names[:2] == ["check_mcp_server", "badge_for_mcp_server"], f"{names}"

    demo.expect("check_mcp_server, free pool", tool_free)
    demo.expect("check_mcp_server, paid (_meta x402/payment)", tool_paid)
    demo.expect("badge_for_mcp_server", tool_badge)
    demo.expect("mcp-sonde checks its own /mcp", self_check)

    print("\nbadges")
    quoted = quote(env["targets"]["server-everything (Streamable HTTP)"][0], safe="")
    guarded = quote(env["targets"]["mcp SDK behind bearer auth"][0], safe="")

    def svg() -> tuple[bool, str]:
        answer = http.get(f"{base}/badge/mcp?url={quoted}")
        ok = answer.headers["content-type"].startswith("image/svg+xml") and answer.headers["x-badge-state"] == "ok"
        return ok and b"<svg" in answer.content, f"{answer.headers['x-badge-state']}, {len(answer.content)} bytes"

    def png() -> tuple[bool, str]:
        answer = http.get(f"{base}/badge/mcp.png?url={guarded}")
        ok = answer.content.startswith(b"\x89PNG\r\n\x1a\n") and answer.headers["x-badge-state"] == "auth"
        return ok, f"{answer.headers['x-badge-state']}, {len(answer.content)} bytes"

    def endpoint_json() -> tuple[bool, str]:
        started_at = time.monotonic()
        answer = http.get(f"{base}/badge/mcp.json?url={quoted}").json()
        ms = (time.monotonic() - started_at) * 1000
        ok = (answer["schemaVersion"], answer["label"], answer["color"]) == (1, "MCP", "brightgreen")
        return ok, f"{answer['message']} / {answer['color']} (cached, {ms:.1f} ms)"

    demo.expect("SVG badge (server-everything)", svg)
    demo.expect("PNG badge (server behind auth)", png)
    demo.expect("JSON badge (shields endpoint)", endpoint_json)
    http.close()


def verify_with_cli(answer: bytes, keys_url: str) -> tuple[int, str]:
    """``mcp-sonde verify`` of ``answer`` with the keys at ``keys_url``: its exit code and first line."""
    with tempfile.NamedTemporaryFile(suffix=".json") as file:
        file.write(answer)
        file.flush()
        args = [sys.executable, "-m", "app", "verify", file.name, "--keys", keys_url, "--allow-private"]
        done = subprocess.run(args, capture_output=True, timeout=60, check=False)
    lines = (done.stdout or done.stderr).decode(errors="replace").splitlines()
    return done.returncode, lines[0] if lines else ""


def main() -> int:
    """Run the demo; 0 when every step gave the right answer."""
    demo = Demo()
    logging.basicConfig(level=logging.ERROR)
    for name in ("mcp", "httpx", "httpx2", "mcp_sonde", "uvicorn"):  # the summary is the output
        logging.getLogger(name).setLevel(logging.ERROR)
    with contextlib.ExitStack() as stack:
        env = _start(stack)
        print(f"mcp-sonde at {env['sonde']} (development switch on, free pool and x402 on a local chain)")
        run(demo, env)
    print(f"\n{len(demo.rows) - demo.failed} of {len(demo.rows)} steps right; everything started is stopped.")
    return 1 if demo.failed else 0


if __name__ == "__main__":
    sys.exit(main())
