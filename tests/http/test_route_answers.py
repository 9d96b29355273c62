"""The answers of every HTTP route of the service for fixed inputs, against a recorded file.

One service on the embedded defaults (in-process store, SQLite in a temp data dir, the key it
makes on its first start) with the development switch, checking the ``mcp`` SDK fixture servers
(:mod:`tests.servers.sdk_apps`) under a fixed host name: the resolver gives ``fixture.test`` a
loopback address and :class:`~tests.servers.network.LoopbackNat` carries its port 80 to the
fixture servers and its port 443 to a TLS host that serves the baseline proof document, so every
URL and server id is the same from run to run. State is made through the API first (checks
with the free pool), then every route is asked, each with a success and the cheap refusals,
in a fixed order; every GET route is asked with HEAD too. Each answer is recorded with its
volatile parts replaced (:mod:`tests.http.answers`) and compared with
``tests/data/route_answers.json``; ``MCP_SONDE_RECORD_ANSWERS=1`` writes that file instead.

The set of routes and methods of the app must be the set the recording covers, so a route
added or lost shows here.

What the recording leans on: the whole run takes a few seconds, well inside the one-minute
windows of the rate limits (their ``remaining`` counts are recorded), and within one UTC day
(dates are recorded as days before today, and the free pool is counted per day). Paid checks,
paid baselines and monitors are off (no ``pay_to``): a paid baseline is answered with the x402
document whose ``accepts`` is empty, a monitor with 501 ``payments_not_configured``, so no
monitor is made and its reads are the refusals.
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import httpx2
import pytest
import trustme
from starlette.routing import Match, Route

from app.guard import IPAddress, ResolutionFailed
from app.history.records import server_id_of
from app.http import create_app
from app.settings import Settings
from tests.conftest import LOOPBACK
from tests.http.answers import Normaliser, differences, record
from tests.servers.network import LoopbackNat, server_context
from tests.servers.raw import RawServer, Request, send
from tests.servers.uvicorn_thread import serve

RECORDED = Path(__file__).parent.parent / "data" / "route_answers.json"
PUBLIC_URL = "http://sonde.test"
ADMIN = {"Authorization": "Bearer admin-token-of-the-answers-test"}
FREE = {"X-Free-Pool": "1"}
JSON_RPC = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
NAMES: dict[str, IPAddress] = {
    "fixture.test": ipaddress.ip_address("127.0.0.1"),
    "dead.test": ipaddress.ip_address("127.0.0.2"),  # (no route on the test network: unreachable)
}
SERVER = "http://fixture.test/stateless-json/mcp"
PAGED = "http://fixture.test/paged/mcp"
DEAD = "http://dead.test/mcp"
SERVER_ID = server_id_of(SERVER)
UNKNOWN_ID = "0" * 24
TOOLS = [{"name": "add", "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}}}}]
WIDER = [{"name": "add", "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}}}, {"name": "b"}]


class Names:
    """The test network's resolver: :data:`NAMES`, every other name does not exist."""

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        if host in NAMES:
            return [NAMES[host]]
        raise ResolutionFailed("dns_nxdomain", f"{host} does not exist on the test network")


class Recording:
    """Asks the service and records each answer under its case name, in order."""

    def __init__(self, base: str, routes: list[Route], normaliser: Normaliser) -> None:
        self.client = httpx2.Client(base_url=base, timeout=30)
        self.routes = routes
        self.normaliser = normaliser
        self.cases: dict[str, dict[str, Any]] = {}
        #: route -> (case, path, options) of its first GET, the first that succeeded if one did
        self.first_get: dict[str, tuple[str, str, dict[str, Any]]] = {}
        self.succeeded: set[str] = set()

    def route_of(self, method: str, path: str) -> str:
        scope = {"type": "http", "method": method, "path": urlsplit(path).path, "root_path": ""}
        partial = False
        for route in self.routes:
            match, _ = route.matches(scope)
            if match is Match.FULL:
                return f"{method} {route.path}"
            partial = partial or match is Match.PARTIAL
        return "(method not allowed)" if partial else "(no route)"

    def ask(self, name: str, method: str, path: str, **options: Any) -> httpx2.Response:
        assert name not in self.cases, name
        response = self.client.request(method, path, **options)
        route = self.route_of(method, path)
        if method == "GET" and route.startswith("GET /"):
            ok = response.status_code < 300
            if route not in self.first_get or (ok and route not in self.succeeded):
                self.first_get[route] = (name, path, options)
                self.succeeded |= {route} if ok else set()
        answer = record(response, self.normaliser)  # (first: it learns the ids the request may repeat)
        request: dict[str, Any] = {"method": method, "path": self.normaliser.text(path)}
        for key in ("headers", "json", "data", "content"):
            if key in options:
                value = options[key]
                request[key] = value.decode() if isinstance(value, bytes) else value
        self.cases[name] = {"route": route, "request": self.normaliser.json(request), "answer": answer}
        return response

    def heads(self) -> None:
        """Every GET route asked with HEAD as its first GET case that succeeded (else its first)."""
        for name, path, options in list(self.first_get.values()):
            self.ask(f"{name} (HEAD)", "HEAD", path, headers=options.get("headers", {}))


def wait_until(predicate: Callable[[], bool], within_s: float = 15.0) -> None:
    deadline = time.monotonic() + within_s
    while not predicate():
        assert time.monotonic() < deadline, "the service did not get there in time"
        time.sleep(0.05)


class ProofHost:
    """A TLS host for ``fixture.test`` serving the baseline proof document once it is placed."""

    def __init__(self, ca: trustme.CA) -> None:
        self.document: bytes | None = None
        self.server = RawServer(ssl_context=server_context(ca, "fixture.test"))
        self.server.routes["/.well-known/mcp-sonde.json"] = self.answer

    def answer(self, request: Request, conn: socket.socket) -> None:
        if self.document is None:
            send(conn, 404, {"content-type": "text/plain"}, b"not here")
        else:
            send(conn, 200, {"content-type": "application/json"}, self.document)


@pytest.fixture
def proof_host(tmp_path: Path) -> Iterator[tuple[ProofHost, Path]]:
    ca = trustme.CA()
    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    host = ProofHost(ca)
    host.server.start()
    try:
        yield host, bundle
    finally:
        host.server.stop()


def test_every_route_answers_as_recorded(sdk_base: str, proof_host: tuple[ProofHost, Path], tmp_path: Path) -> None:
    host, bundle = proof_host
    sdk_port = int(sdk_base.rsplit(":", 1)[1])
    nat = LoopbackNat({("127.0.0.1", 80): sdk_port, ("127.0.0.1", 443): host.server.port})
    data_dir = tmp_path / "data"
    settings = Settings(**{**LOOPBACK, "data_dir": data_dir, "public_url": PUBLIC_URL, "ca_bundle": str(bundle),
                           "admin_token": ADMIN["Authorization"].removeprefix("Bearer ")})  # fmt: skip
    app = create_app(settings, resolver=Names(), network_backend=nat)
    routes = [route for route in app.routes if isinstance(route, Route)]
    table = sorted({f"{method} {route.path}" for route in routes for method in route.methods or ()})
    with serve(app, proxy_headers=False) as port:
        fixed = {str(data_dir): "<data-dir>", str(tmp_path): "<tmp>", f"127.0.0.1:{port}": "<service>",
                 f"127.0.0.1:{sdk_port}": "<fixture>", f"127.0.0.1:{host.server.port}": "<proof-host>"}  # fmt: skip
        recording = Recording(f"http://127.0.0.1:{port}", routes, Normaliser(fixed))
        try:
            ask_everything(recording, host)
            recording.heads()
        finally:
            recording.client.close()
    answered = {"routes": table, "cases": recording.cases}
    covered = {case["route"] for case in recording.cases.values()} - {"(no route)", "(method not allowed)"}
    assert covered == set(table), f"routes not asked: {set(table) - covered}; asked, not routes: {covered - set(table)}"
    if os.environ.get("MCP_SONDE_RECORD_ANSWERS") == "1":
        RECORDED.write_text(json.dumps(answered, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        return
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))
    assert recorded["routes"] == table, "the app's routes are not the recorded ones (MCP_SONDE_RECORD_ANSWERS=1)"
    found = differences(recorded["cases"], recording.cases)
    if found:  # (the diff alone: the test's source says nothing more)
        pytest.fail("answers differ from tests/data/route_answers.json:\n" + "\n".join(found), pytrace=False)


def ask_everything(r: Recording, host: ProofHost) -> None:
    """Every route, in a fixed order: state first (checks), then the reads of it."""
    operations(r)
    checks(r)
    wait_for_runs(r, SERVER, 3)
    baselines(r, host)
    wait_for_runs(r, SERVER, 4)
    reads(r)
    badges(r)
    mcp_endpoint(r)
    wait_for_runs(r, PAGED, 2)
    monitors(r)
    admin(r)
    claims(r)
    pages(r)
    r.ask("unknown path", "GET", "/nowhere")
    r.ask("method not allowed", "DELETE", "/v1/mcp/check")
    r.ask("metrics", "GET", "/metrics")


def wait_for_runs(r: Recording, url: str, runs: int) -> None:
    """Until the history keeps ``runs`` runs of ``url`` (runs are written off the check's way)."""
    path = f"/v1/servers/{server_id_of(url)}/history"

    def kept() -> bool:
        answer = r.client.get(path)
        return answer.status_code == 200 and answer.json()["runs"] >= runs

    wait_until(kept)
    wait_until(lambda: r.client.get("/readyz").json()["history"]["queued"] == 0)


def operations(r: Recording) -> None:
    r.ask("healthz", "GET", "/healthz")
    r.ask("readyz", "GET", "/readyz")
    r.ask("openapi yaml", "GET", "/openapi.yaml")
    r.ask("openapi json", "GET", "/openapi.json")
    r.ask("x402 resources", "GET", "/.well-known/x402")
    r.ask("key document", "GET", "/.well-known/mcp-sonde-keys.json")
    r.ask("check catalogue", "GET", "/v1/checks")
    for name in ("check-result-v1.schema.json", "statement-v1.schema.json", "nope.schema.json"):
        r.ask(f"schema {name}", "GET", f"/schemas/{name}")
    for reason in ("invalid_body", "payment_required", "scheme_not_https", "no_such_reason"):
        r.ask(f"problem {reason}", "GET", f"/problems/{reason}")
    css = r.ask("static site.css", "GET", "/static/site.css")
    r.ask("static site.js", "GET", "/static/site.js")
    r.ask("static unknown", "GET", "/static/..%2fsettings.py")
    r.ask("static not modified", "GET", "/static/site.css", headers={"If-None-Match": css.headers["etag"]})


def claims(r: Recording) -> None:
    """The claim and owner routes' refusals (a claim made here would hold a fresh random id)."""
    r.ask("claim of a public suffix", "POST", "/v1/claims", json={"url": "https://github.io/mcp"})
    r.ask("claim without a url", "POST", "/v1/claims", json={"host": "fixture.test"})
    r.ask("claim by an unknown method", "POST", "/v1/claims", json={"url": SERVER, "method": "fax"})
    r.ask("verify an unknown claim", "POST", "/v1/claims/clm_000000000000000000000000/verify")
    wrong = {"Authorization": "Bearer own_not-a-token-of-this-instance"}
    owned = f"/v1/owner/servers/{SERVER_ID}"
    for name, method, path, body in (
        ("owner", "GET", "/v1/owner", None),
        ("owner sweeps", "PUT", "/v1/owner/sweeps", {"paused": True}),
        ("owner profile", "PUT", f"{owned}/profile", {"display_name": "x"}),
        ("owner baseline", "PUT", f"{owned}/baseline", None),
        ("owner baseline clear", "DELETE", f"{owned}/baseline", None),
        ("owner credentialed checks", "GET", f"{owned}/credentialed-checks", None),
    ):
        r.ask(f"{name} without a token", method, path, json=body)
        r.ask(f"{name} with another token", method, path, json=body, headers=wrong)


def checks(r: Recording) -> None:
    check = "/v1/mcp/check"
    r.ask("check without payment", "POST", check, json={"url": SERVER})
    r.ask("check invalid json", "POST", check, content=b"{", headers={"content-type": "application/json", **FREE})
    r.ask("check form body", "POST", check, data={"url": SERVER}, headers=FREE)
    r.ask("check unknown member", "POST", check, json={"url": SERVER, "extra": 1}, headers=FREE)
    r.ask("check refused scheme", "POST", check, json={"url": "ftp://fixture.test/mcp"}, headers=FREE)
    r.ask("check userinfo", "POST", check, json={"url": "https://u:p@fixture.test/mcp"}, headers=FREE)
    r.ask("check foreign origin", "POST", check, json={"url": SERVER}, headers={**FREE, "Origin": "https://evil.test"})
    missing = {"url": SERVER, "baseline": {"run_id": "f" * 64}}
    r.ask("check unknown baseline run", "POST", check, json=missing, headers=FREE)
    first = r.ask("check fixture server", "POST", check, json={"url": SERVER}, headers=FREE)
    r.ask("check paged server with tools", "POST", check, json={"url": PAGED, "include": ["tools"]}, headers=FREE)
    r.ask("check unreachable server", "POST", check, json={"url": DEAD}, headers=FREE)
    r.ask("check unknown host", "POST", check, json={"url": "http://nowhere.test/mcp"}, headers=FREE)
    by_tools = {"url": SERVER, "baseline": {"tools": TOOLS}}
    r.ask("check against given tools", "POST", check, json=by_tools, headers=FREE)
    r.ask("check from the form", "POST", "/", data={"url": SERVER}, headers={"Origin": PUBLIC_URL})
    r.ask("form foreign origin", "POST", "/", data={"url": SERVER}, headers={"Origin": "https://evil.test"})
    r.ask("form refused url", "POST", "/", data={"url": "ftp://fixture.test/mcp"}, headers={"Origin": PUBLIC_URL})
    r.ask("form as json", "POST", "/", json={"url": SERVER})
    assert first.status_code == 200, first.text
    diff = "/v1/mcp/diff"
    r.ask("diff", "POST", diff, json={"before": TOOLS, "after": WIDER})
    r.ask("diff invalid tools", "POST", diff, json={"before": [{"name": 1}], "after": []})
    r.ask("diff invalid shape", "POST", diff, json={"before": []})
    r.ask("diff invalid json", "POST", diff, content=b"[", headers={"content-type": "application/json"})


def baselines(r: Recording, host: ProofHost) -> None:
    path = f"/v1/servers/{SERVER_ID}/baseline"
    proof = {"MCP-Sonde-Proof": "host"}
    r.ask("baseline none approved", "GET", path)
    r.ask("baseline unknown server", "GET", f"/v1/servers/{UNKNOWN_ID}/baseline")
    offer = r.ask("baseline approve unpaid", "PUT", path)
    r.ask("baseline approve proof missing", "PUT", path, headers=proof)
    r.ask("baseline approve bad proof header", "PUT", path, headers={"MCP-Sonde-Proof": "dns"})
    r.ask("baseline approve bad body", "PUT", path, json={"run_id": "x"}, headers=proof)
    r.ask("baseline approve unknown run", "PUT", path, json={"run_id": "e" * 64}, headers=proof)
    r.ask("baseline approve unknown server", "PUT", f"/v1/servers/{UNKNOWN_ID}/baseline", headers=proof)
    host.document = json.dumps(offer.json()["host_proof"]["document"]).encode()
    r.ask("baseline approve with proof", "PUT", path, headers=proof)
    r.ask("baseline approved", "GET", path)
    r.ask("check against the approved baseline", "POST", "/v1/mcp/check", json={"url": SERVER}, headers=FREE)


def reads(r: Recording) -> None:
    server = f"/v1/servers/{SERVER_ID}"
    r.ask("directory", "GET", "/v1/servers")
    r.ask("directory search", "GET", "/v1/servers?q=paged&sort=name")
    r.ask("directory bad sort", "GET", "/v1/servers?sort=nonsense")
    r.ask("directory bad cursor", "GET", "/v1/servers?cursor=abc")
    r.ask("stats", "GET", "/v1/stats")
    r.ask("server", "GET", server)
    r.ask("server unknown", "GET", f"/v1/servers/{UNKNOWN_ID}")
    r.ask("server malformed id", "GET", "/v1/servers/NOT-AN-ID")
    r.ask("server history", "GET", f"{server}/history")
    r.ask("server history 7 days", "GET", f"{server}/history?days=7")
    r.ask("server history bad days", "GET", f"{server}/history?days=0")
    r.ask("server history unknown", "GET", f"/v1/servers/{UNKNOWN_ID}/history")
    r.ask("server changes", "GET", f"{server}/changes")
    r.ask("server changes bad limit", "GET", f"{server}/changes?limit=0")
    r.ask("server changes bad before", "GET", f"{server}/changes?before=yesterday")
    r.ask("server changes unknown", "GET", f"/v1/servers/{UNKNOWN_ID}/changes")
    latest = r.client.get(server).json()["latest"]["attestation_id"]
    r.ask("attestation", "GET", f"/v1/attestations/{latest}")
    r.ask("attestation unknown", "GET", f"/v1/attestations/{'a' * 64}")
    r.ask("attestation malformed", "GET", "/v1/attestations/xyz")


def badges(r: Recording) -> None:
    url = quote(SERVER, safe="")
    svg = r.ask("badge svg", "GET", f"/badge/mcp?url={url}")
    r.ask("badge svg cached", "GET", f"/badge/mcp?url={url}&style=for-the-badge")
    r.ask("badge svg not modified", "GET", f"/badge/mcp?url={url}", headers={"If-None-Match": svg.headers["etag"]})
    r.ask("badge svg refused url", "GET", "/badge/mcp?url=ftp%3A%2F%2Ffixture.test%2Fmcp")
    r.ask("badge svg no url", "GET", "/badge/mcp")
    r.ask("badge svg unreachable", "GET", f"/badge/mcp?url={quote(DEAD, safe='')}")
    r.ask("badge png", "GET", f"/badge/mcp.png?url={url}")
    r.ask("badge png refused url", "GET", "/badge/mcp.png?url=nonsense")
    r.ask("badge json", "GET", f"/badge/mcp.json?url={url}")
    r.ask("badge json refused url", "GET", "/badge/mcp.json?url=nonsense")
    r.ask("uptime badge", "GET", f"/badge/mcp/uptime?url={url}")
    r.ask("uptime badge 7 days flat-square", "GET", f"/badge/mcp/uptime?url={url}&window=7&style=flat-square")
    r.ask("uptime badge never checked", "GET", "/badge/mcp/uptime?url=http%3A%2F%2Ffixture.test%2Fother")
    r.ask("uptime badge refused url", "GET", "/badge/mcp/uptime?url=nonsense")


def call(name: str, arguments: dict[str, Any], n: int) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}


def mcp_endpoint(r: Recording) -> None:
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "answers", "version": "1"}}
    r.ask("mcp initialize", "POST", "/mcp", headers=JSON_RPC,
          json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello})  # fmt: skip
    r.ask("mcp tools list", "POST", "/mcp", headers=JSON_RPC, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    r.ask("mcp badge tool", "POST", "/mcp", headers=JSON_RPC, json=call("badge_for_mcp_server", {"url": SERVER}, 3))
    r.ask("mcp badge tool refused url", "POST", "/mcp", headers=JSON_RPC,
          json=call("badge_for_mcp_server", {"url": "ftp://x.test/"}, 4))  # fmt: skip
    r.ask("mcp check tool unpaid", "POST", "/mcp", headers=JSON_RPC, json=call("check_mcp_server", {"url": SERVER}, 5))
    r.ask("mcp check tool free pool", "POST", "/mcp", headers={**JSON_RPC, **FREE},
          json=call("check_mcp_server", {"url": PAGED}, 6))  # fmt: skip
    r.ask("mcp report tool", "POST", "/mcp", headers=JSON_RPC,
          json=call("get_mcp_server_report", {"server_id": SERVER_ID}, 7))  # fmt: skip
    r.ask("mcp unknown method", "POST", "/mcp", headers=JSON_RPC, json={"jsonrpc": "2.0", "id": 8, "method": "nope"})
    r.ask("mcp not json", "POST", "/mcp", content=b"hello", headers={"content-type": "text/plain"})


def monitors(r: Recording) -> None:
    body = {"url": SERVER, "interval_s": 3600, "webhook": "http://fixture.test/hook"}
    r.ask("monitor create unpaid", "POST", "/v1/monitors", json=body)
    r.ask("monitor create bad interval", "POST", "/v1/monitors", json=body | {"interval_s": 1})
    r.ask("monitor create refused url", "POST", "/v1/monitors", json=body | {"url": "ftp://fixture.test/mcp"})
    r.ask("monitor create unresolved webhook", "POST", "/v1/monitors", json=body | {"webhook": "http://nowhere.test/"})
    unknown, token = f"/v1/monitors/mon_{'0' * 24}", {"Authorization": "Bearer not-a-token"}
    r.ask("monitor unknown", "GET", unknown, headers=token)
    r.ask("monitor malformed id", "GET", "/v1/monitors/nope")
    r.ask("monitor delete unknown", "DELETE", unknown, headers=token)
    r.ask("monitor deliveries unknown", "GET", f"{unknown}/deliveries", headers=token)
    r.ask("monitor deliveries bad query", "GET", f"{unknown}/deliveries?limit=0", headers=token)


def admin(r: Recording) -> None:
    path = "/v1/admin/optout"
    r.ask("optout list without token", "GET", path)
    r.ask("optout list wrong token", "GET", path, headers={"Authorization": "Bearer wrong"})
    r.ask("optout list empty", "GET", path, headers=ADMIN)
    r.ask("optout add", "POST", path, json={"item": "optout.test"}, headers=ADMIN)
    r.ask("optout add again", "POST", path, json={"item": "optout.test"}, headers=ADMIN)
    r.ask("optout add invalid body", "POST", path, json={"host": "optout.test"}, headers=ADMIN)
    r.ask("optout add invalid item", "POST", path, json={"item": "ftp://"}, headers=ADMIN)
    r.ask("optout list one", "GET", path, headers=ADMIN)
    r.ask("optout remove", "DELETE", f"{path}?item=optout.test", headers=ADMIN)
    r.ask("optout remove again", "DELETE", f"{path}?item=optout.test", headers=ADMIN)
    r.ask("optout remove without item", "DELETE", path, headers=ADMIN)
    r.ask("optout remove without token", "DELETE", f"{path}?item=optout.test")


def pages(r: Recording) -> None:
    r.ask("home page", "GET", "/")
    r.ask("directory page", "GET", "/servers")
    r.ask("directory page search", "GET", "/servers?q=fixture")
    r.ask("directory page bad sort", "GET", "/servers?sort=nonsense")
    r.ask("server page", "GET", f"/servers/{SERVER_ID}")
    r.ask("server page unknown", "GET", f"/servers/{UNKNOWN_ID}")
    r.ask("stats page", "GET", "/stats")
    r.ask("probe page", "GET", "/probe")
    r.ask("check catalogue page", "GET", "/checks")
    r.ask("API reference page", "GET", "/api")
