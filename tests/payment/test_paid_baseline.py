"""Baselines approved for a payment on an offline chain: one approval per payment, the same payment
again refused (or, with its payment identifier, answered as before), and nothing charged when
the approval cannot be written (the database goes away between the lookup and the write)."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import anyio
import httpx2
from starlette.types import ASGIApp, Receive, Scope, Send

from app.baselines.store import Baselines
from app.checking.services import open_history
from tests.conftest import reason_of
from tests.history.conftest import relayed_postgres
from tests.http.routes.test_baseline import FIRST, SECOND, SERVER, seed
from tests.payment.chain import PRICE, START_BALANCE, Chain, facilitator_app, pay
from tests.payment.conftest import PaidService
from tests.servers.tcp_relay import Relay
from tests.servers.uvicorn_thread import serve


def put(base: str, body: dict[str, Any] | None, signature: str | None = None) -> httpx2.Response:
    headers = {"PAYMENT-SIGNATURE": signature} if signature else {}
    return httpx2.put(f"{base}/v1/servers/{SERVER}/baseline", json=body, headers=headers, timeout=30)


def payment_for(base: str, chain: Chain, body: dict[str, Any] | None, identifier: str | None = None) -> str:
    unpaid = put(base, body)
    assert unpaid.status_code == 402, unpaid.text
    return anyio.run(pay, chain.payer, unpaid.headers["payment-required"], identifier)


def test_a_paid_approval_and_the_same_payment_again(paid_service: PaidService, chain: Chain, tmp_path: Path) -> None:
    seed(tmp_path, FIRST, SECOND)
    with paid_service(data_dir=tmp_path) as base:
        offered = put(base, {"run_id": FIRST.run_id})
        signature = anyio.run(pay, chain.payer, offered.headers["payment-required"])
        paid = put(base, {"run_id": FIRST.run_id}, signature)
        again = put(base, {"run_id": FIRST.run_id}, signature)
        elsewhere = put(base, {"run_id": SECOND.run_id}, signature)
        kept = httpx2.get(f"{base}/v1/servers/{SERVER}/baseline", timeout=10)
    document = json.loads(base64.b64decode(offered.headers["payment-required"]))
    assert document["resource"]["url"] == f"https://sonde.example.org/v1/servers/{SERVER}/baseline"
    assert document["accepts"][0]["amount"] == str(PRICE) and "bazaar" not in document["extensions"]
    assert offered.json()["host_proof"]["run_id"] == FIRST.run_id
    assert paid.status_code == 200, paid.text
    assert (paid.json()["run_id"], paid.json()["approved_by"]) == (FIRST.run_id, "payment")
    receipt = json.loads(base64.b64decode(paid.headers["payment-response"]))
    assert receipt["success"] is True
    assert [(a.status_code, reason_of(a)) for a in (again, elsewhere)] == [(402, "payment_already_used")] * 2
    assert again.json()["host_proof"]["run_id"] == FIRST.run_id  # every 402 says how to prove instead
    assert kept.json() == paid.json()  # approved once: the refused copies changed nothing
    assert chain.balance(chain.payer) == START_BALANCE - PRICE


def test_a_payment_never_replaces_the_host_s_own_approval(
    paid_service: PaidService, chain: Chain, tmp_path: Path
) -> None:
    """Regression: anyone who paid could approve another list over one the host had approved by
    proof of control, so checks of the server compared against the payer's choice."""
    seed(tmp_path, FIRST, SECOND)

    async def by_host() -> None:
        store = open_history(f"sqlite+aiosqlite:///{tmp_path / 'history.sqlite3'}")
        try:
            await Baselines(store.engine).approve(SERVER, FIRST.run_id, "host_proof")
        finally:
            await store.aclose()

    asyncio.run(by_host())
    with paid_service(data_dir=tmp_path) as base:
        unpaid = put(base, {"run_id": SECOND.run_id})
        kept = httpx2.get(f"{base}/v1/servers/{SERVER}/baseline", timeout=10)
    assert (unpaid.status_code, reason_of(unpaid)) == (409, "baseline_held")  # before any payment is asked
    assert (kept.json()["run_id"], kept.json()["approved_by"]) == (FIRST.run_id, "host_proof")
    assert chain.state["calls"].get("settle", 0) == 0 and chain.balance(chain.payer) == START_BALANCE


def test_a_payment_identifier_gets_its_answer_again_and_nothing_more(
    paid_service: PaidService, chain: Chain, tmp_path: Path
) -> None:
    seed(tmp_path, FIRST, SECOND)
    with paid_service(data_dir=tmp_path) as base:
        signature = payment_for(base, chain, None, identifier="baseline-approval-0001")
        paid = put(base, None, signature)  # the newest complete list: the second run's
        replayed = put(base, None, signature)
        other_request = put(base, {"run_id": FIRST.run_id}, signature)
        kept = httpx2.get(f"{base}/v1/servers/{SERVER}/baseline", timeout=10)
    assert paid.status_code == 200 and paid.json()["run_id"] == SECOND.run_id
    assert replayed.status_code == 200 and replayed.content == paid.content
    assert replayed.headers["payment-response"] == paid.headers["payment-response"]
    assert (other_request.status_code, reason_of(other_request)) == (409, "payment_identifier_conflict")
    assert kept.json()["approved_at"] == paid.json()["approved_at"]  # not approved a second time
    assert chain.balance(chain.payer) == START_BALANCE - PRICE
    assert chain.state["calls"]["settle"] == 1


class CutOnVerify:
    """The facilitator, cutting the database's relay as a payment is verified: after the service
    looked the run up, before it writes the approval."""

    def __init__(self, app: ASGIApp, database: Relay) -> None:
        self.app, self.database, self.armed = app, database, True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == "/verify" and self.armed:
            self.armed = False
            self.database.cut()
        await self.app(scope, receive, send)


def test_nothing_is_charged_when_the_approval_cannot_be_written(
    paid_service: PaidService, chain: Chain, tmp_path: Path
) -> None:
    with relayed_postgres() as (database, url):
        seed_postgres(url)
        cutter = CutOnVerify(facilitator_app(chain), database)
        with (
            serve(cutter) as port,
            paid_service(database_url=url, facilitator_url=f"http://127.0.0.1:{port}") as base,
        ):
            signature = payment_for(base, chain, {"run_id": FIRST.run_id})
            failed = put(base, {"run_id": FIRST.run_id}, signature)
            database.open = True
            retried = put(base, {"run_id": FIRST.run_id}, signature)
    assert (failed.status_code, reason_of(failed)) == (503, "history_unavailable")
    assert retried.status_code == 200, retried.text  # the payment was released, not spent
    assert chain.balance(chain.payer) == START_BALANCE - PRICE  # charged once, for the approval written


def seed_postgres(url: str) -> None:
    async def write() -> None:
        store = open_history(url)
        try:
            await store.record(FIRST)
        finally:
            await store.aclose()

    asyncio.run(write())
