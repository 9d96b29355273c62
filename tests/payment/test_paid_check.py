"""Paid checks end to end on an offline chain: real signatures, a real facilitator, real transfers."""

from __future__ import annotations

import base64
import json
import socket
import time
from typing import Any

import anyio
import httpx2
import pytest

from app.attest.verify.keydoc import parse_keys
from app.attest.verify.verifier import verify
from tests.conftest import Service, reason_of
from tests.payment.chain import PRICE, START_BALANCE, Chain, decode, encode, malleate, pay, with_authorization
from tests.payment.conftest import PaidService
from tests.servers.raw import RawServer, Request
from tests.servers.raw_mcp import MiniMcp


def payment_for(base: str, chain: Chain, url: dict[str, str], account: Any = None) -> str:
    unpaid = httpx2.post(f"{base}/v1/mcp/check", json=url)
    assert unpaid.status_code == 402
    return anyio.run(pay, account or chain.payer, unpaid.headers["payment-required"])


def paid_post(base: str, url: dict[str, Any], signature: str) -> httpx2.Response:
    return httpx2.post(f"{base}/v1/mcp/check", json=url, headers={"PAYMENT-SIGNATURE": signature}, timeout=30)


def settled_transfers(chain: Chain) -> list[Any]:
    return [log for log in chain.transfers() if log["args"]["sender"] != "0x" + "0" * 40]


@pytest.fixture
def target(raw: RawServer) -> dict[str, str]:
    raw.routes["/mcp"] = MiniMcp()
    return {"url": raw.url("/mcp")}


def probes_of(raw: RawServer) -> int:
    return sum(1 for r in raw.seen if r.message.get("method") == "server/discover")


def test_402_states_the_requirements(paid_service: PaidService, chain: Chain, target: dict[str, str]) -> None:
    with paid_service() as base:
        response = httpx2.post(f"{base}/v1/mcp/check", json=target, headers={"Origin": "https://agent.example"})
    assert response.status_code == 402
    document = json.loads(base64.b64decode(response.headers["payment-required"]))
    body = response.json()
    assert {k: v for k, v in body.items() if k != "message"} == document
    assert document["x402Version"] == 2 and document["error"] == "payment_required"
    assert document["resource"]["url"] == "https://sonde.example.org/v1/mcp/check"
    (option,) = document["accepts"]
    assert option == {
        "scheme": "exact",
        "network": chain.network,
        "asset": chain.token.address,
        "amount": "5000",
        "payTo": chain.pay_to.address,
        "maxTimeoutSeconds": 60,
        "extra": {"name": "USD Coin", "version": "2"},
    }
    assert "bazaar" in document["extensions"]
    exposed = response.headers["access-control-expose-headers"].lower()
    assert "payment-required" in exposed and "payment-response" in exposed


def test_default_requirements_name_base_and_polygon_usdc() -> None:
    from app.payment import payment_requirements
    from app.settings import Settings

    options = payment_requirements(Settings(pay_to="0x" + "1" * 40))
    assert [(o.network, o.asset, o.amount, o.extra) for o in options] == [
        ("eip155:8453", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "5000", {"name": "USD Coin", "version": "2"}),
        ("eip155:137", "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359", "5000", {"name": "USD Coin", "version": "2"}),
    ]


def test_happy_path(paid_service: PaidService, chain: Chain, raw: RawServer, target: dict[str, str]) -> None:
    with paid_service() as base:
        signature = payment_for(base, chain, target)
        paid = paid_post(base, target, signature)
        keys = httpx2.get(f"{base}/.well-known/mcp-sonde-keys.json", timeout=10).content
    assert paid.status_code == 200, paid.text
    assert paid.json()["status"] == "ok" and paid.json()["server"]["name"] == "mini"
    assert verify(paid.content, parse_keys(keys)).result_checked  # a paid check is signed like any other
    receipt = json.loads(base64.b64decode(paid.headers["payment-response"]))
    assert receipt["success"] is True and receipt["transaction"].startswith("0x")
    assert receipt["network"] == chain.network and receipt["payer"].lower() == chain.payer.address.lower()
    assert chain.balance(chain.payer) == START_BALANCE - PRICE
    assert chain.balance(chain.pay_to) == PRICE
    (transfer,) = settled_transfers(chain)
    assert (transfer["args"]["sender"], transfer["args"]["receiver"], transfer["args"]["value"]) == (
        chain.payer.address,
        chain.pay_to.address,
        PRICE,
    )
    assert probes_of(raw) == 1


@pytest.mark.parametrize(
    ("field", "value"),
    [("amount", "4999"), ("payTo", "0x" + "2" * 40), ("asset", "0x" + "3" * 40), ("network", "eip155:8453")],
)
def test_payment_that_does_not_match_our_requirements(
    paid_service: PaidService, chain: Chain, raw: RawServer, target: dict[str, str], field: str, value: str
) -> None:
    with paid_service() as base:
        payload = decode(payment_for(base, chain, target))
        accepted = payload.accepted.model_dump(by_alias=True) | {field: value}
        tampered = encode(payload.model_copy(update={"accepted": type(payload.accepted).model_validate(accepted)}))
        response = paid_post(base, target, tampered)
    assert (response.status_code, reason_of(response)) == (402, "payment_mismatch")
    assert chain.balance(chain.payer) == START_BALANCE and probes_of(raw) == 0


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"value": PRICE - 1}, "payment_mismatch"),  # (the signed part is compared with ours first)
        ({"to": "0x" + "4" * 40}, "payment_mismatch"),
        ({"valid_before": int(time.time()) - 10}, "payment_invalid"),
        ({"valid_after": int(time.time()) + 3600}, "payment_invalid"),
    ],
    ids=["authorizes-less", "authorizes-someone-else", "expired", "not-yet-valid"],
)
def test_authorization_the_facilitator_refuses(
    paid_service: PaidService,
    chain: Chain,
    raw: RawServer,
    target: dict[str, str],
    change: dict[str, Any],
    reason: str,
) -> None:
    with paid_service() as base:
        signature = with_authorization(payment_for(base, chain, target), chain, chain.payer, **change)
        response = paid_post(base, target, signature)
    assert (response.status_code, reason_of(response)) == (402, reason)
    assert chain.balance(chain.payer) == START_BALANCE and probes_of(raw) == 0


def test_tampered_signature(paid_service: PaidService, chain: Chain, raw: RawServer, target: dict[str, str]) -> None:
    with paid_service() as base:
        payload = decode(payment_for(base, chain, target))
        signature = payload.payload["signature"]
        flipped = signature[:10] + ("0" if signature[10] != "0" else "1") + signature[11:]
        tampered = encode(payload.model_copy(update={"payload": payload.payload | {"signature": flipped}}))
        response = paid_post(base, target, tampered)
    assert (response.status_code, reason_of(response)) == (402, "payment_invalid")
    assert chain.balance(chain.payer) == START_BALANCE and probes_of(raw) == 0


def test_insufficient_balance(paid_service: PaidService, chain: Chain, raw: RawServer, target: dict[str, str]) -> None:
    with paid_service() as base:
        response = paid_post(base, target, payment_for(base, chain, target, account=chain.broke))
    assert (response.status_code, reason_of(response)) == (402, "payment_invalid")
    assert chain.balance(chain.broke) == PRICE - 1 and probes_of(raw) == 0


@pytest.mark.parametrize("twin", [False, True], ids=["same-header", "malleated-signature"])
def test_the_same_payment_again_after_success(
    paid_service: PaidService, chain: Chain, raw: RawServer, target: dict[str, str], twin: bool
) -> None:
    with paid_service() as base:
        signature = payment_for(base, chain, target)
        assert paid_post(base, target, signature).status_code == 200
        if twin:
            payload = decode(signature)
            signature = encode(
                payload.model_copy(
                    update={"payload": payload.payload | {"signature": malleate(payload.payload["signature"])}}
                )
            )
        again = paid_post(base, target, signature)
    assert again.status_code == 402
    assert reason_of(again) in ("payment_already_used", "payment_invalid")
    assert chain.balance(chain.payer) == START_BALANCE - PRICE and len(settled_transfers(chain)) == 1
    assert probes_of(raw) == 1


def test_twenty_concurrent_copies_buy_one_check(
    paid_service: PaidService, chain: Chain, raw: RawServer, target: dict[str, str]
) -> None:
    with paid_service() as base:
        signature = payment_for(base, chain, target)

        async def burst() -> list[httpx2.Response]:
            async with httpx2.AsyncClient(timeout=60, limits=httpx2.Limits(max_connections=20)) as client:
                responses: list[httpx2.Response] = []

                async def one() -> None:
                    responses.append(
                        await client.post(f"{base}/v1/mcp/check", json=target, headers={"PAYMENT-SIGNATURE": signature})
                    )

                async with anyio.create_task_group() as group:
                    for _ in range(20):
                        group.start_soon(one)
                return responses

        responses = anyio.run(burst)
    codes = sorted(r.status_code for r in responses)
    assert codes.count(200) == 1
    assert set(codes) - {200} <= {402, 409}
    assert chain.balance(chain.payer) == START_BALANCE - PRICE and len(settled_transfers(chain)) == 1
    assert probes_of(raw) == 1


def test_payment_with_a_refused_url_moves_nothing(
    paid_service: PaidService, chain: Chain, target: dict[str, str]
) -> None:
    with paid_service(allow_private=False) as base:
        signature = payment_for(base, chain, {"url": "https://mcp.example.org/mcp"})
        response = paid_post(base, {"url": "https://169.254.169.254/latest"}, signature)
    assert (response.status_code, response.json()["reason"]) == (422, "host_ip_literal")
    assert chain.balance(chain.payer) == START_BALANCE
    assert chain.state["calls"] == {"verify": 0, "settle": 0}


def test_facilitator_down_is_503_and_nothing_is_served(
    paid_service: PaidService, chain: Chain, raw: RawServer, target: dict[str, str]
) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    closed = f"http://127.0.0.1:{sock.getsockname()[1]}"
    sock.close()
    with paid_service() as working:
        signature = payment_for(working, chain, target)
    with paid_service(facilitator_url=closed) as base:
        response = paid_post(base, target, signature)
        ready = httpx2.get(f"{base}/readyz").json()
    assert (response.status_code, response.json()["reason"]) == (503, "facilitator_unavailable")
    assert ready["status"] == "degraded"
    assert ready["payments"] == {"enabled": True, "facilitator_ok": False, "supported": "unknown"}
    assert chain.balance(chain.payer) == START_BALANCE and probes_of(raw) == 0


def test_free_pool_needs_no_payment(paid_service: PaidService, chain: Chain, target: dict[str, str]) -> None:
    with paid_service() as base:
        response = httpx2.post(f"{base}/v1/mcp/check", json=target, headers={"X-Free-Pool": "1"})
    assert response.status_code == 200 and "payment-response" not in response.headers
    assert chain.state["calls"] == {"verify": 0, "settle": 0}


def test_settlement_failure_withholds_the_result(paid_service: PaidService, chain: Chain, raw: RawServer) -> None:
    """The payer empties the account after verify (while the check runs): the settlement reverts on chain."""
    raw.routes["/mcp"] = MiniMcp()

    def drain() -> None:
        chain.w3.eth.send_transaction(
            {"from": chain.w3.eth.accounts[0], "to": chain.payer.address, "value": chain.w3.to_wei(1, "ether")}
        )
        balance = chain.balance(chain.payer)
        transaction = chain.token.functions.transfer(chain.broke.address, balance).build_transaction(
            {"from": chain.payer.address, "nonce": chain.w3.eth.get_transaction_count(chain.payer.address)}
        )
        chain.w3.eth.send_raw_transaction(chain.payer.sign_transaction(transaction).raw_transaction)

    chain.state["drain_before_settle"] = drain
    target = {"url": raw.url("/mcp")}
    with paid_service() as base:
        response = paid_post(base, target, payment_for(base, chain, target))
    assert (response.status_code, reason_of(response)) == (402, "settlement_failed")
    receipt = json.loads(base64.b64decode(response.headers["payment-response"]))
    assert receipt["success"] is False
    assert "status" not in response.json()  # the probe result is withheld
    assert chain.balance(chain.pay_to) == 0


def test_probe_failure_of_ours_releases_the_payment(
    paid_service: PaidService, chain: Chain, raw: RawServer, target: dict[str, str]
) -> None:
    """A check refused after payment (429: the host's paid turns are taken) is not charged; the payment works later."""
    with paid_service(queue_budget_s=0.3, host_concurrency=1) as base:
        signature = payment_for(base, chain, target)
        blocking = payment_for(base, chain, target)
        import threading

        hold = threading.Event()
        inner = MiniMcp()

        @raw.route("/slow")
        def slow(request: Request, conn: socket.socket) -> None:
            hold.wait(3)
            inner(request, conn)

        blocker = threading.Thread(target=lambda: paid_post(base, {"url": raw.url("/slow")}, blocking))
        blocker.start()
        time.sleep(0.3)
        busy = paid_post(base, target, signature)
        hold.set()
        blocker.join()
        later = paid_post(base, target, signature)
    assert (busy.status_code, busy.json()["reason"]) == (429, "target_busy")
    assert later.status_code == 200
    assert chain.balance(chain.payer) == START_BALANCE - 2 * PRICE and len(settled_transfers(chain)) == 2


def test_paid_check_never_waits_behind_free_work(
    paid_service: PaidService, chain: Chain, raw: RawServer, target: dict[str, str]
) -> None:
    """Free checks from two clients hold every turn at the host: a paid check still starts at once."""
    import threading

    hold = threading.Event()
    inner = MiniMcp()

    @raw.route("/slow")
    def slow(request: Request, conn: socket.socket) -> None:
        hold.wait(5)
        inner(request, conn)

    with paid_service(queue_budget_s=2, host_concurrency=2, trusted_proxies=["127.0.0.1"]) as base:
        signature = payment_for(base, chain, target)

        def free(client: str, n: int) -> None:
            headers = {"X-Free-Pool": "1", "X-Forwarded-For": client}
            httpx2.post(f"{base}/v1/mcp/check", json={"url": raw.url(f"/slow?n={n}")}, headers=headers, timeout=30)

        blockers = [threading.Thread(target=free, args=(f"203.0.113.{n % 2 + 1}", n)) for n in range(6)]
        for blocker in blockers:
            blocker.start()
        time.sleep(0.5)
        started = time.monotonic()
        paid = paid_post(base, target, signature)
        took = time.monotonic() - started
        hold.set()
        for blocker in blockers:
            blocker.join()
    assert paid.status_code == 200 and paid.json()["status"] == "ok"
    assert took < 1.5  # not queued behind the free probes (they hold the host for 5 s)


def test_garbage_payment_header(paid_service: PaidService, chain: Chain, target: dict[str, str]) -> None:
    with paid_service() as base:
        for value in (
            "not base64!",
            base64.b64encode(b"{}").decode(),
            "A" * 40_000,
            base64.b64encode(b"[" * 9000).decode(),
        ):
            response = paid_post(base, target, value)
            assert (response.status_code, reason_of(response)) == (400, "invalid_payment"), value[:20]
    assert chain.state["calls"]["verify"] == 0


def test_discovery_and_contract_state_the_payment(paid_service: PaidService, chain: Chain) -> None:
    with paid_service() as base:
        discovery = httpx2.get(f"{base}/.well-known/x402").json()
        contract = httpx2.get(f"{base}/openapi.json").json()
    (resource,) = discovery["resources"]
    assert discovery["x402Version"] == 2
    assert resource["method"] == "POST" and resource["resource"]["url"] == "https://sonde.example.org/v1/mcp/check"
    assert resource["accepts"][0]["payTo"] == chain.pay_to.address and "bazaar" in resource["extensions"]
    info = contract["paths"]["/v1/mcp/check"]["post"]["x-payment-info"]
    assert info["enabled"] is True and info["price"] == {"usd": "0.005"}
    assert info["accepts"][0]["asset"] == chain.token.address and info["accepts"][0]["amount"] == "5000"
    assert "402" in contract["paths"]["/v1/mcp/check"]["post"]["responses"]


def test_without_pay_to_paid_checks_are_off(service: Service, sdk_base: str) -> None:
    with service() as base:
        response = httpx2.post(f"{base}/v1/mcp/check", json={"url": f"{sdk_base}/stateless-json/mcp"})
        discovery = httpx2.get(f"{base}/.well-known/x402").json()
        paid = httpx2.post(
            f"{base}/v1/mcp/check",
            json={"url": f"{sdk_base}/stateless-json/mcp"},
            headers={"PAYMENT-SIGNATURE": "e30="},
        )
    assert (response.status_code, reason_of(response)) == (402, "payment_required")
    assert response.json()["accepts"] == [] and discovery["resources"] == []
    assert "not configured" in response.json()["message"]
    assert (paid.status_code, reason_of(paid)) == (402, "payment_required")


def test_payment_outcomes_are_counted(
    paid_service: PaidService, chain: Chain, raw: RawServer, target: dict[str, str]
) -> None:
    from tests.checking.test_metrics import value

    with paid_service() as base:
        signature = payment_for(base, chain, target)
        assert paid_post(base, target, signature).status_code == 200
        assert reason_of(paid_post(base, target, signature)) == "payment_already_used"  # a replay
        past = int(time.time()) - 10
        refused = with_authorization(payment_for(base, chain, target), chain, chain.payer, valid_before=past)
        assert reason_of(paid_post(base, target, refused)) == "payment_invalid"
        assert reason_of(paid_post(base, target, "not base64!")) == "invalid_payment"
        unused = payment_for(base, chain, target)
        text = httpx2.get(f"{base}/metrics").text
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    closed = f"http://127.0.0.1:{sock.getsockname()[1]}"
    sock.close()
    with paid_service(facilitator_url=closed) as down:
        assert reason_of(paid_post(down, target, unused)) == "facilitator_unavailable"
        unavailable = httpx2.get(f"{down}/metrics").text
    counted = {
        outcome: value(text, "mcp_sonde_payments_total", outcome=outcome)
        for outcome in ("settled", "payment_already_used", "payment_invalid", "invalid_payment", "released")
    }
    assert counted == {
        "settled": 1,
        "payment_already_used": 1,
        "payment_invalid": 1,
        "invalid_payment": 1,
        "released": 0,
    }
    assert value(unavailable, "mcp_sonde_payments_total", outcome="facilitator_unavailable") == 1


def test_a_verified_payment_not_used_is_counted_released(
    paid_service: PaidService, chain: Chain, raw: RawServer
) -> None:
    """A paid check whose own lookup gives no definitive answer is served but not charged."""
    from app.guard import IPAddress, ResolutionFailed
    from tests.checking.test_metrics import value

    class TimesOut:
        async def resolve(self, host: str, port: int) -> list[IPAddress]:
            raise ResolutionFailed("dns_timeout", "no answer")

    url = {"url": "https://mcp.example.org/mcp"}
    with paid_service(resolver=TimesOut()) as base:
        answer = paid_post(base, url, payment_for(base, chain, url))
        text = httpx2.get(f"{base}/metrics").text
    assert answer.status_code == 200 and answer.json()["status"] == "dns"
    assert value(text, "mcp_sonde_payments_total", outcome="released") == 1
    assert value(text, "mcp_sonde_payments_total", outcome="settled") == 0
    assert chain.balance(chain.payer) == START_BALANCE


def test_a_traced_paid_check_has_its_facilitator_calls_as_children(
    paid_service: PaidService, chain: Chain, target: dict[str, str]
) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with paid_service(tracer_provider=provider, otel_enabled=True) as base:
        signature = payment_for(base, chain, target)
        exporter.clear()  # (the unpaid 402 above is a check span of its own)
        assert paid_post(base, target, signature).status_code == 200
    spans = exporter.get_finished_spans()
    (check,) = [span for span in spans if span.name == "mcp_sonde.check"]
    assert check.context is not None
    children = {span.name: span for span in spans if span.parent and span.parent.span_id == check.context.span_id}
    verify, settle = children["mcp_sonde.facilitator.verify"], children["mcp_sonde.facilitator.settle"]
    assert dict(verify.attributes or {}) == {"server.address": "127.0.0.1", "mcp_sonde.outcome": "valid"}
    assert dict(settle.attributes or {}) == {"server.address": "127.0.0.1", "mcp_sonde.outcome": "settled"}
    assert "mcp_sonde.probe.tools/list" in children
    assert verify.end_time is not None and settle.start_time is not None and verify.end_time <= settle.start_time
    assert signature not in repr([dict(span.attributes or {}) for span in spans])
