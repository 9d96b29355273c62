"""Summaries of credentialed checks, end to end: a server on a claimed TLS host behind a bearer
token that echoes the token back, checked with the caller's credentials under production rules;
its owner reads names and counts, and no form of the token is in the answer's summary or the
database file."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from app.claims.credentialed import CredentialedChecks
from app.history.records import server_id_of
from app.settings import Settings
from app.suite.full import full_check
from tests.attest.test_served import CANARY, Echoing
from tests.checking.test_credentialed import FREE
from tests.conftest import Service, reason_of
from tests.http.routes.test_baseline import HOST, SERVER, URL, ProofHost, proof_host, seed, sonde
from tests.http.routes.test_claims import owner, post, publish
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp

__all__ = ["proof_host"]


SECRET_PART = CANARY.partition(" ")[2]


class EchoingGated(Echoing):
    """Behind the canary token, and copies it, as it is, reversed and upper-cased, into its answers."""

    def _result(self, method: object) -> dict[str, Any]:
        result = super()._result(method)
        if method == "initialize":
            result["serverInfo"] = {"name": CANARY, "version": SECRET_PART[::-1]}
        if method == "tools/list":
            result["tools"].append({"name": "whoami", "description": f"you are {SECRET_PART.upper()}"})
        return result


def test_the_owner_sees_summaries_of_credentialed_checks_of_their_server_and_nothing_of_the_token(
    service: Service, tmp_path: Path, proof_host: ProofHost
) -> None:
    seed(tmp_path)
    proof_host.server.routes["/mcp"] = EchoingGated(tools=["alpha", "beta"])
    with sonde(service, tmp_path, proof_host) as (base, _):
        claim = post(base, "/v1/claims", {"url": URL}).json()
        publish(proof_host, claim["challenge"])
        token = post(base, f"/v1/claims/{claim['claim_id']}/verify").json()["owner_token"]
        headers = FREE | {"content-type": "application/json"}
        body = {"url": URL, "headers": {"Authorization": CANARY}}
        checked = [httpx2.post(f"{base}/v1/mcp/check", json=body, headers=headers, timeout=30) for _ in range(2)]
        anonymous = httpx2.post(f"{base}/v1/mcp/check", json={"url": URL}, headers=headers, timeout=30)
        path = f"/v1/owner/servers/{SERVER}/credentialed-checks"
        seen = owner(base, "GET", path, token)
        nobody = owner(base, "GET", path, None)
        stranger = owner(base, "GET", path, "own_not-a-token")
    assert [c.status_code for c in checked] == [200, 200] and checked[0].json()["status"] == "ok", checked[0].text
    assert anonymous.json()["status"] == "auth"
    assert seen.status_code == 200, seen.text
    document = seen.json()
    assert (document["server_id"], document["host"]) == (SERVER, HOST)
    assert len(document["checks"]) == 2  # the two credentialed checks; the anonymous one is in the history
    newest = document["checks"][0]
    # alpha, beta, the tool Echoing names after the token, and whoami
    assert (newest["status"], newest["reason"], newest["tools"]) == ("ok", "ok", 4)
    assert newest["credential_headers"] == ["Authorization"]
    assert {c["id"] for c in newest["checks"]} == {c["id"] for c in checked[1].json()["checks"]}
    assert set(newest) == {
        "checked_at", "status", "reason", "failed_step", "era", "transport", "latency_ms", "http_status",
        "tools", "checks", "credential_headers",
    }  # fmt: skip
    assert (nobody.status_code, reason_of(nobody)) == (401, "owner_unauthorized")
    assert (stranger.status_code, reason_of(stranger)) == (403, "owner_forbidden")
    forms = (SECRET_PART, SECRET_PART.upper(), SECRET_PART[::-1])
    assert not any(form in seen.text for form in forms)
    database = b"".join(p.read_bytes() for p in tmp_path.glob("history.sqlite3*"))
    assert not any(form.encode() in database for form in forms)


def test_a_credentialed_check_of_another_host_is_not_shown_to_this_owner(
    service: Service, tmp_path: Path, proof_host: ProofHost
) -> None:
    """The summaries are filed under the checked URL's host: another host's server gives nothing."""
    seed(tmp_path)
    other = server_id_of("https://other.sonde-proof.net/mcp")
    with sonde(service, tmp_path, proof_host) as (base, _):
        claim = post(base, "/v1/claims", {"url": URL}).json()
        publish(proof_host, claim["challenge"])
        token = post(base, f"/v1/claims/{claim['claim_id']}/verify").json()["owner_token"]
        with sqlite3.connect(tmp_path / "history.sqlite3") as db:
            db.execute(
                "INSERT INTO credentialed_checks (server_id, host, checked_at, summary) VALUES (?, ?, ?, ?)",
                (other, "other.sonde-proof.net", datetime.now(UTC).isoformat(), '{"status": "ok"}'),
            )
        theirs = owner(base, "GET", f"/v1/owner/servers/{other}/credentialed-checks", token)
        malformed = owner(base, "GET", "/v1/owner/servers/NOT-AN-ID/credentialed-checks", token)
    # another host's server is 404, as on every owner route (it answered 200 with an empty list)
    assert (theirs.status_code, reason_of(theirs)) == (404, "server_not_found")
    assert (malformed.status_code, reason_of(malformed)) == (404, "server_not_found")


@pytest.mark.anyio
async def test_each_server_keeps_its_newest_summaries_only_on_both_backends(
    engine: AsyncEngine, raw: RawServer, dev_settings: Settings
) -> None:
    """A real full check of a loopback server, kept five times with room for three."""
    raw.routes["/mcp"] = MiniMcp(tools=["alpha"])
    result = (await full_check(raw.url("/mcp"), settings=dev_settings)).model_copy(update={"credentialed": True})
    store = CredentialedChecks(engine, keep=3)
    for n in range(5):
        await store.add(result.model_copy(update={"latency_ms": float(n)}), "127.0.0.1")
    kept = await store.newest(server_id_of(result.url), "127.0.0.1")
    assert [each.summary["latency_ms"] for each in kept] == [4.0, 3.0, 2.0]
    assert await store.newest(server_id_of(result.url), "127.0.0.2") == []
