"""``/v1/monitors`` on a service taking payments on an offline chain: a block of runs bought with
one payment (the 402 says how many), the token and webhook secret shown once, the same payment
never making a second monitor, refusals before anything is paid, the owner's reads and the
delivery log, and the same 404 for an unknown id and a wrong token."""

from __future__ import annotations

import asyncio
import base64
import ipaddress
import json
from pathlib import Path
from typing import Any

import anyio
import httpx2
from sqlalchemy import select

from app.checking.services import open_history
from app.db.tables.monitors import monitors
from app.history.records import utc
from app.monitors.source import MonitorSource
from app.monitors.store import MonitorStore
from app.settings import Settings
from app.webhooks import store as deliveries
from tests.conftest import reason_of
from tests.payment.chain import PRICE, START_BALANCE, Chain, pay
from tests.payment.conftest import PaidService, chain, facilitator_url, paid_service
from tests.servers.network import PUBLIC, FixedResolver

__all__ = ["chain", "facilitator_url", "paid_service"]
#: A block of 5 runs at USD 0.001: the price of the chain's test payments (5000 atomic units).
BLOCK = {"monitor_run_price_usd": "0.001", "monitor_block_runs": 5}
BODY = {"url": "http://127.0.0.1:9/mcp", "interval_s": 300, "webhook": "http://127.0.0.1:9/hook"}


def post(base: str, body: Any, signature: str | None = None, raw: bytes | None = None) -> httpx2.Response:
    headers = {"content-type": "application/json"} | ({"PAYMENT-SIGNATURE": signature} if signature else {})
    content = raw if raw is not None else json.dumps(body).encode()
    return httpx2.post(f"{base}/v1/monitors", content=content, headers=headers, timeout=30)


def get(base: str, path: str, token: str | None) -> httpx2.Response:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    return httpx2.get(f"{base}{path}", headers=headers, timeout=10)


def other_token(token: str) -> str:
    """A token one character off ``token`` (its last character changed, whatever it was)."""
    return token[:-1] + ("B" if token.endswith("A") else "A")


def test_a_token_ending_in_the_letter_used_to_spoil_it_still_gets_a_different_token() -> None:
    assert other_token("xyzA") == "xyzB" and other_token("xyzQ") == "xyzA"


def monitor_rows(data_dir: Path) -> list[Any]:
    async def read() -> list[Any]:
        store = open_history(f"sqlite+aiosqlite:///{data_dir / 'history.sqlite3'}")
        try:
            async with store.engine.connect() as db:
                return list((await db.execute(select(monitors))).all())
        finally:
            await store.aclose()

    return asyncio.run(read())


def test_a_block_of_runs_bought_and_the_same_payment_again(
    paid_service: PaidService, chain: Chain, tmp_path: Path
) -> None:
    with paid_service(data_dir=tmp_path, **BLOCK) as base:
        offered = post(base, BODY)
        signature = anyio.run(pay, chain.payer, offered.headers["payment-required"])
        made = post(base, BODY, signature)
        again = post(base, BODY, signature)
        created = made.json()
        read = get(base, f"/v1/monitors/{created['monitor_id']}", created["token"])
        wrong = get(base, f"/v1/monitors/{created['monitor_id']}", other_token(created["token"]))
        unknown = get(base, "/v1/monitors/mon_" + "0" * 24, created["token"])
        anonymous = get(base, f"/v1/monitors/{created['monitor_id']}", None)
        stopped = httpx2.delete(
            f"{base}/v1/monitors/{created['monitor_id']}", headers={"authorization": f"Bearer {created['token']}"}
        )
        after = get(base, f"/v1/monitors/{created['monitor_id']}", created["token"])
    assert offered.status_code == 402
    document = json.loads(base64.b64decode(offered.headers["payment-required"]))
    assert document["resource"]["url"] == "https://sonde.example.org/v1/monitors"
    assert "5 runs" in document["resource"]["description"]
    assert document["accepts"][0]["amount"] == str(PRICE)
    assert offered.json()["monitor_block"] == {"runs": 5, "price_per_run_usd": "0.001", "price_usd": "0.005"}
    assert made.status_code == 201, made.text
    assert created["token"] and created["webhook_secret"].startswith("whsec_")
    assert len(base64.b64decode(created["webhook_secret"].removeprefix("whsec_"))) == 32
    assert (created["runs_left"], created["runs_bought"], created["state"]) == (5, 5, "active")
    assert json.loads(base64.b64decode(made.headers["payment-response"]))["success"] is True
    assert (again.status_code, reason_of(again)) == (402, "payment_already_used")
    assert read.status_code == 200 and read.json()["state"] == "active" and read.json()["runs_left"] == 5
    assert "token" not in read.json() and "webhook_secret" not in read.json()
    for refused in (wrong, unknown, anonymous):
        assert (refused.status_code, reason_of(refused)) == (404, "monitor_not_found")
    assert wrong.json()["detail"] == unknown.json()["detail"]
    assert stopped.status_code == 200 and stopped.json()["state"] == "deleted"
    assert after.json()["state"] == "deleted" and after.json()["next_due_at"] is None
    [row] = monitor_rows(tmp_path)
    assert created["token"] not in repr(tuple(row)) and created["webhook_secret"] not in repr(tuple(row))
    assert chain.balance(chain.payer) == START_BALANCE - PRICE  # one block, charged once


def test_a_payment_identifier_gets_its_answer_again_and_no_second_monitor(
    paid_service: PaidService, chain: Chain, tmp_path: Path
) -> None:
    with paid_service(data_dir=tmp_path, **BLOCK) as base:
        offered = post(base, BODY)
        signature = anyio.run(pay, chain.payer, offered.headers["payment-required"], "monitor-block-000001")
        made = post(base, BODY, signature)
        replayed = post(base, BODY, signature)
        elsewhere = post(base, BODY | {"interval_s": 600}, signature)
    assert made.status_code == 201 and replayed.status_code == 201, replayed.text
    assert replayed.json()["monitor_id"] == made.json()["monitor_id"]
    assert replayed.json()["token"] is None and replayed.json()["webhook_secret"] is None  # shown once only
    assert (elsewhere.status_code, reason_of(elsewhere)) == (409, "payment_identifier_conflict")
    assert len(monitor_rows(tmp_path)) == 1
    assert chain.state["calls"]["settle"] == 1 and chain.balance(chain.payer) == START_BALANCE - PRICE


def test_refused_urls_and_bodies_cost_nothing(paid_service: PaidService, chain: Chain, tmp_path: Path) -> None:
    resolver = FixedResolver(
        {"mcp.example.com": [PUBLIC], "hooks.example.org": [ipaddress.ip_address("10.0.0.7")],
         "gone.example.org": []}
    )  # fmt: skip
    public = {"url": "https://mcp.example.com/mcp", "interval_s": 300}
    with paid_service(data_dir=tmp_path, allow_private=False, resolver=resolver, **BLOCK) as base:
        offered = post(base, public | {"webhook": "https://mcp.example.com/hook"})
        signature = anyio.run(pay, chain.payer, offered.headers["payment-required"])
        answers = [
            post(base, public | {"webhook": "https://hooks.example.org/hook"}, signature),
            post(base, public | {"webhook": "https://127.0.0.1/hook"}, signature),
            post(base, {"url": "http://mcp.example.com/mcp", "interval_s": 300, "webhook": "https://mcp.example.com/h"}),
            post(base, public | {"webhook": "https://gone.example.org/hook"}, signature),
            post(base, public | {"webhook": "https://mcp.example.com/hook?key=1"}, signature),
            post(base, public | {"webhook": "https://mcp.example.com/hook", "extra": 1}, signature),
            post(base, public | {"webhook": "https://mcp.example.com/hook", "interval_s": 299}, signature),
            post(base, None, signature, raw=b'{"url": "https://mcp.example.com/mcp", "url": "https://x.example.com", '
                                            b'"interval_s": 300, "webhook": "https://mcp.example.com/hook"}'),
            post(base, None, signature, raw=b"{not json"),
        ]  # fmt: skip
    assert [(a.status_code, reason_of(a)) for a in answers] == [
        (422, "address_not_public"),
        (422, "host_ip_literal"),
        (422, "scheme_not_https"),
        (422, "webhook_unresolved"),
        (422, "query_not_allowed"),
        (422, "invalid_body"),
        (422, "invalid_body"),
        (422, "invalid_body"),
        (400, "invalid_json"),
    ]
    assert offered.status_code == 402  # the public one is offered
    assert chain.state["calls"] == {"verify": 0, "settle": 0} and chain.balance(chain.payer) == START_BALANCE
    assert monitor_rows(tmp_path) == []


def test_staging_takes_ten_second_intervals_and_a_plain_instance_does_not(paid_service: PaidService) -> None:
    short, shorter = BODY | {"interval_s": 10}, BODY | {"interval_s": 9}
    with paid_service(**BLOCK) as base:
        plain = [post(base, short), post(base, BODY)]
    with paid_service(staging=True, **BLOCK) as base:
        staged = [post(base, short), post(base, shorter)]
    assert [(a.status_code, reason_of(a)) for a in plain] == [(422, "invalid_body"), (402, "payment_required")]
    assert "<300 to 604800>" in plain[0].json()["detail"]
    assert [(a.status_code, reason_of(a)) for a in staged] == [(402, "payment_required"), (422, "invalid_body")]
    assert "<10 to 604800>" in staged[1].json()["detail"]


def test_an_instance_taking_no_payments_says_so_instead_of_an_empty_offer(paid_service: PaidService) -> None:
    with paid_service(pay_to=None, **BLOCK) as base:
        answer = post(base, BODY)
    assert (answer.status_code, reason_of(answer)) == (501, "payments_not_configured")
    assert answer.headers["cache-control"] == "no-store" and "payment-required" not in answer.headers


def test_the_delivery_log_pages_newest_first_and_runs_become_due(
    paid_service: PaidService, chain: Chain, tmp_path: Path
) -> None:
    with paid_service(data_dir=tmp_path, **BLOCK) as base:
        offered = post(base, BODY)
        made = post(base, BODY, anyio.run(pay, chain.payer, offered.headers["payment-required"])).json()
        [row] = monitor_rows(tmp_path)
        url = f"sqlite+aiosqlite:///{tmp_path / 'history.sqlite3'}"

        async def seed() -> list[str]:
            store = open_history(url)
            try:
                source = MonitorSource(MonitorStore(store.engine), store, Settings())
                [job] = await source.due(utc(row.next_due_at), 10)
                assert (job.ref, job.url) == (made["monitor_id"], BODY["url"])
                async with store.engine.begin() as db:
                    return [await deliveries.add(db, row.id, "monitor.status_changed", b"{}", row.created_at)
                            for _ in range(3)]  # fmt: skip
            finally:
                await store.aclose()

        ids = asyncio.run(seed())
        path = f"/v1/monitors/{made['monitor_id']}/deliveries"
        first = get(base, f"{path}?limit=2", made["token"])
        second = get(base, f"{path}?limit=2&before={first.json()['next']}", made["token"])
        bad = get(base, f"{path}?limit=0", made["token"])
        foreign = get(base, f"{path}?before=msg_{'0' * 32}", made["token"])
        stranger = get(base, path, "not-the-token")
        read = get(base, f"/v1/monitors/{made['monitor_id']}", made["token"]).json()
    assert first.status_code == 200, first.text
    assert [d["delivery_id"] for d in first.json()["deliveries"]] == ids[:0:-1]
    assert [d["delivery_id"] for d in second.json()["deliveries"]] == ids[:1] and second.json()["next"] is None
    assert first.json()["deliveries"][0]["state"] == "pending" and first.json()["deliveries"][0]["log"] == []
    assert [(r.status_code, reason_of(r)) for r in (bad, foreign, stranger)] == [
        (400, "invalid_query"), (400, "invalid_query"), (404, "monitor_not_found"),
    ]  # fmt: skip
    assert read["runs_left"] == 4 and len(read["last_runs"]) == 1 and read["last_runs"][0]["status"] is None


def test_a_monitor_for_an_opted_out_url_is_refused_before_payment(
    paid_service: PaidService, chain: Chain, tmp_path: Path
) -> None:
    admin = {"authorization": "Bearer " + "a" * 32}
    with paid_service(data_dir=tmp_path, admin_token="a" * 32, **BLOCK) as base:
        listed = httpx2.post(f"{base}/v1/admin/optout", json={"item": "http://127.0.0.1:9/mcp"}, headers=admin)
        for_url = post(base, BODY)
        for_url_spelt_otherwise = post(base, BODY | {"url": "http://127.0.0.1:9/x/../mcp"})
        httpx2.delete(f"{base}/v1/admin/optout", params={"item": "http://127.0.0.1:9/mcp"}, headers=admin)
        httpx2.post(f"{base}/v1/admin/optout", json={"item": "127.0.0.1"}, headers=admin)
        for_webhook = post(base, BODY | {"url": "http://[::1]:9/mcp"})
    assert listed.status_code == 201, listed.text
    for refused in (for_url, for_url_spelt_otherwise):
        assert (refused.status_code, reason_of(refused)) == (422, "opted_out"), refused.text
    assert (for_webhook.status_code, reason_of(for_webhook)) == (422, "opted_out"), for_webhook.text
    assert chain.state["calls"]["settle"] == 0 and monitor_rows(tmp_path) == []
