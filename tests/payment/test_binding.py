"""A payment buys only what it was made for: the route's resource, amount, network, asset and payTo.

Each case was reproduced against the routes at one price (a check, a baseline approval and a
block of monitor runs all cost USD 0.005): the payment made for one was spent on another.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx2

from tests.conftest import reason_of
from tests.http.routes.test_baseline import FIRST, SECOND, seed
from tests.monitors.test_routes import BLOCK, BODY
from tests.monitors.test_routes import post as post_monitor
from tests.payment.chain import PRICE, START_BALANCE, Chain, decode, encode, pay
from tests.payment.conftest import PaidService
from tests.payment.test_paid_baseline import put
from tests.payment.test_paid_check import paid_post, probes_of
from tests.servers.raw import RawServer


def test_a_payment_made_for_a_baseline_approval_does_not_buy_a_check(
    paid_service: PaidService, chain: Chain, tmp_path: Path, raw: RawServer, target: dict[str, str]
) -> None:
    seed(tmp_path, FIRST, SECOND)
    with paid_service(data_dir=tmp_path) as base:
        offered = put(base, {"run_id": FIRST.run_id})
        signature = anyio.run(pay, chain.payer, offered.headers["payment-required"])
        spent_elsewhere = paid_post(base, target, signature)
        approved = put(base, {"run_id": FIRST.run_id}, signature)  # still buys what it was made for
    assert (spent_elsewhere.status_code, reason_of(spent_elsewhere)) == (402, "payment_mismatch")
    assert probes_of(raw) == 0
    assert approved.status_code == 200, approved.text
    assert chain.balance(chain.payer) == START_BALANCE - PRICE


def test_a_payment_made_for_a_check_does_not_buy_a_baseline_approval(
    paid_service: PaidService, chain: Chain, tmp_path: Path, raw: RawServer, target: dict[str, str]
) -> None:
    seed(tmp_path, FIRST, SECOND)
    with paid_service(data_dir=tmp_path) as base:
        unpaid = httpx2.post(f"{base}/v1/mcp/check", json=target, timeout=30)
        signature = anyio.run(pay, chain.payer, unpaid.headers["payment-required"])
        spent_elsewhere = put(base, {"run_id": FIRST.run_id}, signature)
        baseline = httpx2.get(spent_elsewhere.url, timeout=10)
        checked = paid_post(base, target, signature)
    assert (spent_elsewhere.status_code, reason_of(spent_elsewhere)) == (402, "payment_mismatch")
    assert spent_elsewhere.json()["host_proof"]["run_id"] == FIRST.run_id  # the 402 still says how to prove
    assert baseline.status_code == 404  # nothing was approved
    assert checked.status_code == 200, checked.text
    assert chain.balance(chain.payer) == START_BALANCE - PRICE


def test_a_payment_made_for_a_monitor_block_does_not_buy_a_check_even_relabelled(
    paid_service: PaidService, chain: Chain, tmp_path: Path, raw: RawServer, target: dict[str, str]
) -> None:
    """The payload's ``resource`` is the client's copy; relabelled as a check it still carries the
    monitor's amount in the signed authorization when the prices differ, and at one price its
    resource names the monitor block: either way it is refused."""
    with paid_service(data_dir=tmp_path, **BLOCK) as base:
        offered = post_monitor(base, BODY)
        signature = anyio.run(pay, chain.payer, offered.headers["payment-required"])
        as_is = paid_post(base, target, signature)
        unpaid = httpx2.post(f"{base}/v1/mcp/check", json=target, timeout=30)
        check_resource = decode(anyio.run(pay, chain.payer, unpaid.headers["payment-required"])).resource
        relabelled = encode(decode(signature).model_copy(update={"resource": check_resource}))
        with_check_label = paid_post(base, target, relabelled)
        bought = post_monitor(base, BODY, signature)
    assert (as_is.status_code, reason_of(as_is)) == (402, "payment_mismatch")
    # At one price the relabelled copy is the one payment a leaked header allows: it buys one
    # thing (the lock names the authorization), and then the monitor is not bought with it.
    assert with_check_label.status_code == 200, with_check_label.text
    assert (bought.status_code, reason_of(bought)) == (402, "payment_already_used")
    assert chain.balance(chain.payer) == START_BALANCE - PRICE


def test_a_signed_authorization_for_another_amount_or_payto_is_refused_before_the_facilitator(
    paid_service: PaidService, chain: Chain, raw: RawServer, target: dict[str, str]
) -> None:
    with paid_service(price_usd="0.002") as base:
        unpaid = httpx2.post(f"{base}/v1/mcp/check", json=target, timeout=30)
        payload = decode(anyio.run(pay, chain.payer, unpaid.headers["payment-required"]))
    with paid_service(price_usd="0.005") as base:
        # the accepted copy edited to this route's price: the signature still moves 0.002
        accepted = payload.accepted.model_copy(update={"amount": str(PRICE)})
        resource = payload.resource
        cheaper = paid_post(base, target, encode(payload.model_copy(update={"accepted": accepted})))
        nameless = paid_post(base, target, encode(payload.model_copy(update={"accepted": accepted, "resource": None})))
    assert resource is not None and resource.url.endswith("/v1/mcp/check")
    assert [(r.status_code, reason_of(r)) for r in (cheaper, nameless)] == [(402, "payment_mismatch")] * 2
    assert probes_of(raw) == 0
    assert chain.balance(chain.payer) == START_BALANCE
