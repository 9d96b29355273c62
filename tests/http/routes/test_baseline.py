"""Approving a server's baseline by proof of control of its host, over real HTTPS.

The proof host is a TLS server on loopback with a certificate from a test CA (trustme), reached
under production rules (no development switch): the resolver gives a public address and
:class:`tests.servers.network.LoopbackNat` carries that address's port 443 to the server."""

from __future__ import annotations

import asyncio
import base64
import ipaddress
import json
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx2
import pytest
import trustme

from app.checking.services import open_history
from app.db import migrate
from app.history.records import Run, server_id_of
from tests.conftest import Service, reason_of
from tests.history.test_changes import WIDER
from tests.history.test_store import run as sample_run
from tests.http.test_openapi import DOCUMENT_POINTER, validator
from tests.servers.network import PUBLIC, FixedResolver, LoopbackNat, server_context
from tests.servers.raw import RawServer, Request, send

HOST = "mcp.sonde-proof.net"
URL = f"https://{HOST}/mcp"
SERVER = server_id_of(URL)
WELL_KNOWN = "/.well-known/mcp-sonde.json"


def run(n: int, **changes: Any) -> Run:
    """A run of the server at :data:`URL` whose run id is an attestation id (64 hex)."""
    return replace(sample_run(n), run_id=f"{n + 1:064x}", attestation_id=f"{n + 1:064x}", url=URL, host=HOST,
                   **changes)  # fmt: skip


FIRST, SECOND = run(0), run(1, tools=WIDER, schema_fingerprint="9" * 64)


def seed(data_dir: Path, *runs: Run) -> None:
    async def write() -> None:
        database = f"sqlite+aiosqlite:///{data_dir / 'history.sqlite3'}"
        await migrate.upgrade(database)
        store = open_history(database)
        try:
            for each in runs:
                await store.record(each)
        finally:
            await store.aclose()

    asyncio.run(write())


@dataclass
class ProofHost:
    server: RawServer
    bundle: Path

    def serve(self, body: bytes, status: int = 200, headers: dict[str, str] | None = None, path: str = WELL_KNOWN,
              delay_s: float = 0.0) -> None:  # fmt: skip
        def answer(request: Request, conn: socket.socket) -> None:
            time.sleep(delay_s)
            send(conn, status, {"content-type": "application/json"} | (headers or {}), body)

        self.server.routes[path] = answer

    def place(self, *tokens: str) -> None:
        self.serve(json.dumps({"mcp-sonde": {"baseline_tokens": list(tokens)}}).encode())


@pytest.fixture
def proof_host(tmp_path: Path) -> Iterator[ProofHost]:
    ca = trustme.CA()
    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    server = RawServer(ssl_context=server_context(ca, HOST))
    server.start()
    try:
        yield ProofHost(server, bundle)
    finally:
        server.stop()


@contextmanager
def sonde(
    service: Service, tmp_path: Path, host: ProofHost, address: str = str(PUBLIC), **overrides: Any
) -> Iterator[tuple[str, LoopbackNat]]:
    """The service under production rules, with :data:`HOST` at ``address`` (port 443 carried to the proof host)."""
    nat = LoopbackNat({(str(PUBLIC), 443): host.server.port})
    resolver = FixedResolver({HOST: [ipaddress.ip_address(address)]})
    with service(resolver=resolver, network_backend=nat, allow_private=False, ca_bundle=str(host.bundle),
                 data_dir=tmp_path, **overrides) as base:  # fmt: skip
        yield base, nat


def put(
    base: str, body: dict[str, Any] | None = None, *, server: str = SERVER, headers: dict[str, str] | None = None
) -> httpx2.Response:
    return httpx2.put(f"{base}/v1/servers/{server}/baseline", json=body, headers=headers or {}, timeout=30)


def raw_put(base: str, content: bytes, media_type: str) -> httpx2.Response:
    url = f"{base}/v1/servers/{SERVER}/baseline"
    return httpx2.put(url, content=content, headers={"content-type": media_type}, timeout=10)


PROOF = {"MCP-Sonde-Proof": "host"}


def test_the_token_placed_on_the_host_approves_the_newest_complete_list(
    service: Service, tmp_path: Path, proof_host: ProofHost
) -> None:
    seed(tmp_path, FIRST, SECOND, run(2, tools=None, status="timeout", reason="handshake_timeout"))
    with sonde(service, tmp_path, proof_host) as (base, nat):
        offered = put(base)  # no body: the newest run that read the whole list
        proof = offered.json()["host_proof"]
        proof_host.place("0" * 64, proof["token"])
        approved = put(base, headers=PROOF)
        kept = httpx2.get(f"{base}/v1/servers/{SERVER}/baseline", timeout=10)
    assert (offered.status_code, reason_of(offered)) == (402, "payment_required")
    assert offered.headers["cache-control"] == "no-store" and "x-ratelimit-remaining" in offered.headers
    assert proof["url"] == f"https://{HOST}{WELL_KNOWN}" and proof["run_id"] == SECOND.run_id
    assert proof["document"] == {"mcp-sonde": {"baseline_tokens": [proof["token"]]}}
    assert proof["header"] == {"name": "MCP-Sonde-Proof", "value": "host"}
    document = json.loads(base64.b64decode(offered.headers["payment-required"]))
    assert {k: v for k, v in offered.json().items() if k not in ("message", "host_proof")} == document
    assert document["resource"]["url"].endswith(f"/v1/servers/{SERVER}/baseline") and document["accepts"] == []
    assert approved.status_code == 200, approved.text
    body = approved.json()
    assert (body["server_id"], body["run_id"], body["approved_by"]) == (SERVER, SECOND.run_id, "host_proof")
    assert (body["tool_count"], body["tool_names"]) == (3, ["add", "echo", "sum"])
    assert body["schema_fingerprint"] == "9" * 64 and body["definitions_sha256"] == proof["definitions_sha256"]
    assert approved.headers["cache-control"] == "no-store"
    assert kept.status_code == 200 and kept.json() == body
    schemas = DOCUMENT_POINTER + "/components/schemas/"
    validator(schemas + "BaselinePaymentRequired").validate(offered.json())  # as the contract says
    validator(schemas + "Baseline").validate(body)
    validator(schemas + "ProofDocument").validate(proof["document"])
    (fetched,) = proof_host.server.requests_to(WELL_KNOWN)
    assert fetched.method == "GET" and fetched.headers["user-agent"].startswith("mcp-sonde/")
    assert set(nat.dialled) == {(str(PUBLIC), 443)}


def test_a_wrong_token_approves_nothing(service: Service, tmp_path: Path, proof_host: ProofHost) -> None:
    seed(tmp_path, FIRST)
    proof_host.place("0" * 64)
    with sonde(service, tmp_path, proof_host) as (base, _nat):
        refused = put(base, {"run_id": FIRST.run_id}, headers=PROOF)
        kept = httpx2.get(f"{base}/v1/servers/{SERVER}/baseline", timeout=10)
    assert (refused.status_code, reason_of(refused)) == (403, "proof_invalid")
    assert refused.headers["cache-control"] == "no-store"
    assert (kept.status_code, reason_of(kept)) == (404, "baseline_not_found")


def test_a_public_token_approves_only_its_own_tool_set(service: Service, tmp_path: Path, proof_host: ProofHost) -> None:
    """The host published the token of the first list; someone replays it to approve another run."""
    seed(tmp_path, FIRST, SECOND)
    with sonde(service, tmp_path, proof_host) as (base, _nat):
        first_token = put(base, {"run_id": FIRST.run_id}).json()["host_proof"]["token"]
        second_token = put(base, {"run_id": SECOND.run_id}).json()["host_proof"]["token"]
        proof_host.place(first_token)
        replayed = put(base, {"run_id": SECOND.run_id}, headers=PROOF)
        own = put(base, {"run_id": FIRST.run_id}, headers=PROOF)
    assert first_token != second_token
    assert (replayed.status_code, reason_of(replayed)) == (403, "proof_invalid")
    assert own.status_code == 200 and own.json()["run_id"] == FIRST.run_id and own.json()["tool_count"] == 2


def test_a_document_over_64_kb_is_not_read(service: Service, tmp_path: Path, proof_host: ProofHost) -> None:
    seed(tmp_path, FIRST)
    with sonde(service, tmp_path, proof_host) as (base, _nat):
        token = put(base).json()["host_proof"]["token"]
        padding = "x" * (64 * 1024)
        proof_host.serve(json.dumps({"mcp-sonde": {"baseline_tokens": [token]}, "padding": padding}).encode())
        refused = put(base, headers=PROOF)
    assert (refused.status_code, reason_of(refused)) == (403, "proof_invalid")
    assert "larger than 65536 bytes" in refused.json()["detail"]


def test_a_slow_host_runs_out_of_time(service: Service, tmp_path: Path, proof_host: ProofHost) -> None:
    seed(tmp_path, FIRST)
    with sonde(service, tmp_path, proof_host, baseline_proof_timeout_s=0.5) as (base, _nat):
        token = put(base).json()["host_proof"]["token"]
        proof_host.serve(json.dumps({"mcp-sonde": {"baseline_tokens": [token]}}).encode(), delay_s=2.0)
        started = time.monotonic()
        refused = put(base, headers=PROOF)
        took = time.monotonic() - started
    assert (refused.status_code, reason_of(refused)) == (403, "proof_timeout")
    assert took < 1.8


def test_redirects_stay_on_the_host(service: Service, tmp_path: Path, proof_host: ProofHost) -> None:
    seed(tmp_path, FIRST)
    with sonde(service, tmp_path, proof_host) as (base, nat):
        token = put(base).json()["host_proof"]["token"]
        proof_host.serve(b"", 302, {"location": f"https://elsewhere.sonde-proof.net{WELL_KNOWN}"})
        off_host = put(base, headers=PROOF)
        proof_host.serve(b"", 301, {"location": "/proofs/mcp-sonde.json"})
        document = json.dumps({"mcp-sonde": {"baseline_tokens": [token]}}).encode()
        proof_host.serve(document, path="/proofs/mcp-sonde.json")
        same_host = put(base, headers=PROOF)
        proof_host.serve(b"", 302, {"location": WELL_KNOWN})  # to itself, for ever
        looping = put(base, headers=PROOF)
    assert (off_host.status_code, reason_of(off_host)) == (403, "proof_redirect_refused")
    assert same_host.status_code == 200, same_host.text
    assert (looping.status_code, reason_of(looping)) == (403, "proof_redirect_refused")
    assert set(nat.dialled) == {(str(PUBLIC), 443)}  # nothing else was ever dialled


def test_a_host_at_a_private_address_is_refused_by_the_guard(
    service: Service, tmp_path: Path, proof_host: ProofHost
) -> None:
    seed(tmp_path, FIRST)
    with sonde(service, tmp_path, proof_host, address="10.0.0.7") as (base, nat):
        refused = put(base, headers=PROOF)
    assert (refused.status_code, reason_of(refused)) == (422, "address_not_public")
    assert nat.dialled == [] and proof_host.server.seen == []


def test_unknown_servers_runs_documents_and_malformed_requests(
    service: Service, tmp_path: Path, proof_host: ProofHost
) -> None:
    seed(tmp_path, FIRST, run(5, tools=None, status="timeout", reason="handshake_timeout"))
    with sonde(service, tmp_path, proof_host) as (base, _nat):
        answers = {
            "unknown run": put(base, {"run_id": "f" * 64}, headers=PROOF),
            "run without a list": put(base, {"run_id": run(5).run_id}, headers=PROOF),
            "unknown server": put(base, server="0" * 24),
            "malformed server id": put(base, server="G" * 24),
            "no document": put(base, headers=PROOF),
            "bad run id": put(base, {"run_id": "F" * 64}),
            "extra member": put(base, {"run_id": FIRST.run_id, "by": "me"}),
            "bad proof header": put(base, headers={"MCP-Sonde-Proof": "dns"}),
            "not json": raw_put(base, b"{", "application/json"),
            "not json media": raw_put(base, b"{}", "text/plain"),
            "unknown server's baseline": httpx2.get(f"{base}/v1/servers/{'0' * 24}/baseline", timeout=10),
        }
    assert {name: (a.status_code, reason_of(a)) for name, a in answers.items()} == {
        "unknown run": (404, "run_not_found"),
        "run without a list": (404, "run_not_found"),
        "unknown server": (404, "server_not_found"),
        "malformed server id": (404, "server_not_found"),
        "no document": (403, "proof_not_found"),
        "bad run id": (400, "invalid_baseline_request"),
        "extra member": (400, "invalid_baseline_request"),
        "bad proof header": (400, "invalid_proof_header"),
        "not json": (400, "invalid_json"),
        "not json media": (415, "unsupported_media_type"),
        "unknown server's baseline": (404, "server_not_found"),
    }


def test_a_database_that_does_not_answer_is_503(service: Service) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    with service(database_url=f"postgresql+asyncpg://postgres@127.0.0.1:{port}/none") as base:
        approving = put(base, headers=PROOF)
        reading = httpx2.get(f"{base}/v1/servers/{SERVER}/baseline", timeout=10)
    assert (approving.status_code, reason_of(approving)) == (503, "history_unavailable")
    assert (reading.status_code, reason_of(reading)) == (503, "history_unavailable")
