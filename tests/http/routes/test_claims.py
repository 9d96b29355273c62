"""Owner claims end to end: a real TLS host serving the well-known document, the production guard
(the host's public address carried to a loopback server), and the owner's actions and audit log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.conftest import Service, reason_of
from tests.http.routes.test_baseline import FIRST, SECOND, SERVER, URL, ProofHost, proof_host, seed, sonde
from tests.servers.dns import DnsServer, nameserver_on_loopback

__all__ = ["nameserver_on_loopback", "proof_host"]


def post(base: str, path: str, body: Any = None, token: str | None = None) -> httpx2.Response:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    return httpx2.post(f"{base}{path}", json=body, headers=headers, timeout=30)


def owner(base: str, method: str, path: str, token: str | None, body: Any = None) -> httpx2.Response:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    return httpx2.request(method, f"{base}{path}", json=body, headers=headers, timeout=30)


def publish(host: ProofHost, *challenges: str) -> None:
    host.serve(json.dumps({"mcp-sonde": {"claim_tokens": list(challenges)}}).encode())


def test_a_claim_verified_by_the_well_known_document_issues_an_owner_token_once(
    service: Service, tmp_path: Path, proof_host: ProofHost
) -> None:
    seed(tmp_path, FIRST, SECOND)
    with sonde(service, tmp_path, proof_host) as (base, nat):
        opened = post(base, "/v1/claims", {"url": URL})
        claim = opened.json()
        unpublished = post(base, f"/v1/claims/{claim['claim_id']}/verify")
        publish(proof_host, "someone-else's")
        wrong = post(base, f"/v1/claims/{claim['claim_id']}/verify")
        publish(proof_host, "someone-else's", claim["challenge"])
        verified = post(base, f"/v1/claims/{claim['claim_id']}/verify")
        again = post(base, f"/v1/claims/{claim['claim_id']}/verify")
        listed = httpx2.get(f"{base}/v1/servers/{SERVER}", timeout=10).json()
    assert opened.status_code == 201, opened.text
    assert claim["document_url"] == "https://mcp.sonde-proof.net/.well-known/mcp-sonde.json"
    assert claim["document"] == {"mcp-sonde": {"claim_tokens": [claim["challenge"]]}} and claim["state"] == "pending"
    assert (unpublished.status_code, reason_of(unpublished)) == (403, "claim_proof_not_found")
    assert (wrong.status_code, reason_of(wrong)) == (403, "claim_proof_invalid")
    assert verified.status_code == 200 and verified.json()["state"] == "verified"
    assert verified.json()["owner_token"].startswith("own_")
    assert again.status_code == 200 and "owner_token" not in again.json()  # issued once, kept only hashed
    assert listed["identity"]["claimed"]["verified_at"] is not None
    assert all(port == 443 for _, port in nat.dialled)  # pinned to the host's public address, port 443


@pytest.fixture
def owned(service: Service, tmp_path: Path, proof_host: ProofHost) -> Any:
    seed(tmp_path, FIRST, SECOND)

    class Owned:
        def __enter__(self) -> tuple[str, str]:
            self._context = sonde(service, tmp_path, proof_host)
            base, _ = self._context.__enter__()
            claim = post(base, "/v1/claims", {"url": URL}).json()
            publish(proof_host, claim["challenge"])
            token = post(base, f"/v1/claims/{claim['claim_id']}/verify").json()["owner_token"]
            return base, token

        def __exit__(self, *exc: object) -> None:
            self._context.__exit__(None, None, None)

    return Owned()


def test_an_owner_names_the_server_approves_and_clears_its_baseline_and_pauses_sweeps_all_audited(owned: Any) -> None:
    with owned as (base, token):
        named = owner(base, "PUT", f"/v1/owner/servers/{SERVER}/profile", token, {"display_name": "Proof Tools"})
        page = httpx2.get(f"{base}/v1/servers/{SERVER}", timeout=10).json()
        approved = owner(base, "PUT", f"/v1/owner/servers/{SERVER}/baseline", token, {"run_id": FIRST.run_id})
        kept = httpx2.get(f"{base}/v1/servers/{SERVER}/baseline", timeout=10)
        cleared = owner(base, "DELETE", f"/v1/owner/servers/{SERVER}/baseline", token)
        gone = httpx2.get(f"{base}/v1/servers/{SERVER}/baseline", timeout=10)
        paused = owner(base, "PUT", "/v1/owner/sweeps", token, {"paused": True})
        state = owner(base, "GET", "/v1/owner", token)
    assert named.status_code == 200, named.text
    assert (page["identity"]["named_by"], page["identity"]["title"]) == ("owner", "Proof Tools")
    assert approved.status_code == 200 and approved.json()["run_id"] == FIRST.run_id  # no payment asked
    assert kept.status_code == 200 and kept.json()["run_id"] == FIRST.run_id
    assert cleared.status_code == 204 and gone.status_code == 404
    assert paused.json() == {"host": "mcp.sonde-proof.net", "sweeps_paused": True}
    document = state.json()
    assert document["sweeps_paused"] is True and document["claim"]["state"] == "verified"
    assert [a["action"] for a in document["audit"]] == [
        "sweeps_paused", "baseline_cleared", "baseline_approved", "profile_set", "claim_verified",
    ]  # fmt: skip
    assert token not in state.text


def test_owner_routes_refuse_no_token_another_token_and_another_host_s_server(owned: Any) -> None:
    with owned as (base, token):
        anonymous = owner(base, "GET", "/v1/owner", None)
        forged = owner(base, "GET", "/v1/owner", "own_" + "A" * 43)
        elsewhere = owner(base, "PUT", f"/v1/owner/servers/{'0' * 24}/profile", token, {"display_name": "x"})
        control = owner(base, "PUT", f"/v1/owner/servers/{SERVER}/profile", token, {"display_name": "a\u0007b"})
    assert (anonymous.status_code, reason_of(anonymous)) == (401, "owner_unauthorized")
    assert anonymous.headers["www-authenticate"] == 'Bearer realm="owner"'
    assert (forged.status_code, reason_of(forged)) == (403, "owner_forbidden")
    assert (elsewhere.status_code, reason_of(elsewhere)) == (404, "server_not_found")
    assert (control.status_code, reason_of(control)) == (422, "invalid_body")


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://github.io/mcp", "claim_host_refused"),
        ("https://co.uk/mcp", "claim_host_refused"),
        ("https://com/mcp", "host_not_public_name"),  # (a single label: the guard refuses it first)
    ],
)
def test_a_claim_of_a_public_suffix_is_refused(service: Service, url: str, reason: str) -> None:
    with service(allow_private=False) as base:
        refused = post(base, "/v1/claims", {"url": url})
    assert (refused.status_code, reason_of(refused)) == (422, reason)


def test_a_claim_whose_document_redirects_off_the_host_is_refused(
    service: Service, tmp_path: Path, proof_host: ProofHost
) -> None:
    seed(tmp_path, FIRST)
    with sonde(service, tmp_path, proof_host) as (base, _):
        claim = post(base, "/v1/claims", {"url": URL}).json()
        proof_host.serve(b"", status=302, headers={"location": "https://evil.example/.well-known/mcp-sonde.json"})
        refused = post(base, f"/v1/claims/{claim['claim_id']}/verify")
        unknown = post(base, "/v1/claims/clm_000000000000000000000000/verify")
    assert (refused.status_code, reason_of(refused)) == (403, "claim_proof_redirect_refused")
    assert (unknown.status_code, reason_of(unknown)) == (404, "claim_not_found")


def recheck(tmp_path: Path, proof_host: ProofHost, days: int, dns: DnsServer | None = None) -> dict[str, int]:
    """One turn of the service's re-check job (:class:`app.claims.recheck.Rechecker`) on the
    test's database, ``days`` from now, against the same real host and nameserver."""
    import asyncio
    import ipaddress
    from datetime import UTC, datetime, timedelta

    from app.checking.services import open_history
    from app.claims import ClaimStore, verify_claim
    from app.claims.dns import DnsTxt
    from app.claims.recheck import Rechecker
    from tests.servers.network import PUBLIC, FixedResolver, LoopbackNat

    async def turn() -> dict[str, int]:
        history = open_history(f"sqlite+aiosqlite:///{tmp_path / 'history.sqlite3'}")
        nat = LoopbackNat({(str(PUBLIC), 443): proof_host.server.port})
        resolver = FixedResolver({"mcp.sonde-proof.net": [ipaddress.ip_address(str(PUBLIC))]})
        txt = DnsTxt([dns.address] if dns else ["127.0.0.1:9"], lifetime_s=2.0)

        async def verify(c: Any) -> None:
            await verify_claim(c.host, c.challenge, method=c.method, txt=txt, resolver=resolver, allow_private=False,
                               ca_bundle=str(proof_host.bundle), network_backend=nat)  # fmt: skip

        try:
            return await Rechecker(ClaimStore(history.engine), verify).once(datetime.now(UTC) + timedelta(days=days))
        finally:
            await history.aclose()

    return asyncio.run(turn())


def test_a_claim_is_checked_again_and_lapses_when_the_document_goes_away(
    service: Service, tmp_path: Path, proof_host: ProofHost
) -> None:
    """The re-check job of the service, against the same real host: found again, then gone."""
    seed(tmp_path, FIRST)
    with sonde(service, tmp_path, proof_host) as (base, _):
        claim = post(base, "/v1/claims", {"url": URL}).json()
        publish(proof_host, claim["challenge"])
        token = post(base, f"/v1/claims/{claim['claim_id']}/verify").json()["owner_token"]
        not_yet = recheck(tmp_path, proof_host, 0)
        found = recheck(tmp_path, proof_host, 1)
        proof_host.serve(b"{}", status=404)  # the host answers: the document is gone
        gone = recheck(tmp_path, proof_host, 3)
        after = owner(base, "GET", "/v1/owner", token)
        listed = httpx2.get(f"{base}/v1/servers/{SERVER}", timeout=10).json()
    assert not_yet == {"verified": 0, "failed": 0, "lapsed": 0}  # not due before a day
    assert found == {"verified": 1, "failed": 0, "lapsed": 0}
    assert gone == {"verified": 0, "failed": 0, "lapsed": 1}
    assert (after.status_code, reason_of(after)) == (403, "owner_forbidden")
    assert listed["identity"]["claimed"] is None


def test_a_claim_proved_by_a_dns_txt_record_issues_an_owner_token_and_lapses_when_the_record_goes(
    service: Service, tmp_path: Path, proof_host: ProofHost, nameserver_on_loopback: DnsServer
) -> None:
    dns = nameserver_on_loopback
    seed(tmp_path, FIRST)
    with sonde(service, tmp_path, proof_host, claim_dns_servers=[dns.address]) as (base, nat):
        opened = post(base, "/v1/claims", {"url": URL, "method": "dns_txt"})
        claim = opened.json()
        record = claim["dns_record"]
        unpublished = post(base, f"/v1/claims/{claim['claim_id']}/verify")
        dns.publish(record["name"], "mcp-sonde-claim=someone-else's")
        wrong = post(base, f"/v1/claims/{claim['claim_id']}/verify")
        publish(proof_host, claim["challenge"])  # (the document does not prove a dns_txt claim)
        still_wrong = post(base, f"/v1/claims/{claim['claim_id']}/verify")
        dns.publish(record["name"], "mcp-sonde-claim=someone-else's", ["mcp-sonde-claim=", claim["challenge"]])
        verified = post(base, f"/v1/claims/{claim['claim_id']}/verify")
        listed = httpx2.get(f"{base}/v1/servers/{SERVER}", timeout=10).json()
        found = recheck(tmp_path, proof_host, 1, dns)
        dns.silent.add(record["name"])  # the resolver does not answer: one failure, not a lapse
        unanswered = recheck(tmp_path, proof_host, 2, dns)
        dns.silent.clear()
        dns.records.pop(record["name"])  # NXDOMAIN: the record is gone
        gone = recheck(tmp_path, proof_host, 3, dns)
        after = owner(base, "GET", "/v1/owner", verified.json().get("owner_token"))
    assert opened.status_code == 201, opened.text
    assert claim["method"] == "dns_txt" and claim["document"] is None and claim["document_url"] is None
    assert record == {"name": "_mcp-sonde.mcp.sonde-proof.net", "type": "TXT",
                      "value": f"mcp-sonde-claim={claim['challenge']}"}  # fmt: skip
    assert (unpublished.status_code, reason_of(unpublished)) == (403, "claim_proof_not_found")
    assert (wrong.status_code, reason_of(wrong)) == (403, "claim_proof_invalid")
    assert (still_wrong.status_code, reason_of(still_wrong)) == (403, "claim_proof_invalid")
    assert verified.status_code == 200 and verified.json()["owner_token"].startswith("own_")
    assert listed["identity"]["claimed"]["verified_at"] is not None
    assert nat.dialled == []  # the host itself was never contacted
    assert found == {"verified": 1, "failed": 0, "lapsed": 0}
    assert unanswered == {"verified": 0, "failed": 1, "lapsed": 0}
    assert gone == {"verified": 0, "failed": 0, "lapsed": 1}
    assert (after.status_code, reason_of(after)) == (403, "owner_forbidden")


@pytest.mark.parametrize(
    ("body", "reason"),
    [({"url": "https://127.0.0.1:8443/mcp", "method": "dns_txt"}, "claim_method_refused"),
     ({"url": URL, "method": "carrier_pigeon"}, "invalid_body"), ({"url": URL, "extra": 1}, "invalid_body")],
)  # fmt: skip
def test_a_claim_by_a_method_the_host_cannot_hold_or_that_is_unknown_is_refused(
    service: Service, body: dict[str, Any], reason: str
) -> None:
    with service() as base:
        refused = post(base, "/v1/claims", body)
    assert (refused.status_code, reason_of(refused)) == (422, reason)


def test_a_claimed_hosts_badges_say_claimed_with_the_date_of_the_last_verification(
    service: Service, tmp_path: Path, proof_host: ProofHost
) -> None:
    from datetime import UTC, datetime

    seed(tmp_path, FIRST)
    with sonde(service, tmp_path, proof_host) as (base, _):
        before = httpx2.get(f"{base}/badge/mcp.json", params={"url": URL}, timeout=30).json()
        claim = post(base, "/v1/claims", {"url": URL}).json()
        publish(proof_host, claim["challenge"])
        assert post(base, f"/v1/claims/{claim['claim_id']}/verify").status_code == 200
        svg = httpx2.get(f"{base}/badge/mcp", params={"url": URL}, timeout=30)
        shields = httpx2.get(f"{base}/badge/mcp.json", params={"url": URL}, timeout=30).json()
        refused = httpx2.get(f"{base}/badge/mcp.json", params={"url": "ftp://mcp.sonde-proof.net/mcp"}, timeout=30)
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    assert before["label"] == "MCP"
    assert shields["label"] == f"MCP · claimed {today}" and shields["message"] == before["message"]
    assert svg.status_code == 200 and f"MCP · claimed {today}" in svg.text
    assert refused.json()["label"] == "MCP"  # (a URL the guard refuses speaks for no host)
