"""The MCP tool paid the x402 MCP way, on the offline chain; replays refused across transports."""

from __future__ import annotations

import base64
import json
from typing import Any

import anyio
import pytest

from tests.http.mcp.test_tool import call, tool_reason
from tests.payment.chain import PRICE, START_BALANCE, Chain, decode, pay
from tests.payment.conftest import PaidService
from tests.payment.test_paid_check import paid_post, payment_for, probes_of, settled_transfers
from tests.servers.mcp_clients import Call, typescript_sdk
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp


@pytest.fixture
def target(raw: RawServer) -> dict[str, str]:
    raw.routes["/mcp"] = MiniMcp()
    return {"url": raw.url("/mcp")}


def mcp_payment(base: str, chain: Chain, url: str) -> dict[str, Any]:
    """Call unpaid, then sign for the ``PaymentRequired`` in ``structuredContent``: the ``_meta`` payload."""
    unpaid = anyio.run(lambda: call(base, "check_mcp_server", {"url": url}))
    assert tool_reason(unpaid) == "payment_required"
    required = base64.b64encode(json.dumps(unpaid.structured_content).encode()).decode()
    signature = anyio.run(pay, chain.payer, required)
    return decode(signature).model_dump(mode="json", by_alias=True, exclude_none=True)


def paid_call(base: str, url: str, payload: dict[str, Any]) -> Any:
    return anyio.run(lambda: call(base, "check_mcp_server", {"url": url}, meta={"x402/payment": payload}))


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_paid_tool_call_settles_and_returns_the_receipt(
    paid_service: PaidService, chain: Chain, raw: RawServer, target: dict[str, str], mode: str
) -> None:
    with paid_service() as base:
        payload = mcp_payment(base, chain, target["url"])
        result = anyio.run(lambda: call(base, "check_mcp_server", target, mode=mode, meta={"x402/payment": payload}))
    assert not result.is_error, result.structured_content
    assert isinstance(result.structured_content, dict) and result.structured_content["status"] == "ok"
    assert result.meta is not None
    receipt = result.meta["x402/payment-response"]
    assert receipt["success"] is True and receipt["transaction"].startswith("0x")
    assert receipt["network"] == chain.network and receipt["payer"].lower() == chain.payer.address.lower()
    assert chain.balance(chain.payer) == START_BALANCE - PRICE and chain.balance(chain.pay_to) == PRICE
    assert len(settled_transfers(chain)) == 1 and probes_of(raw) == 1


def test_replayed_payment_buys_nothing_on_the_tool_or_the_route(
    paid_service: PaidService, chain: Chain, raw: RawServer, target: dict[str, str]
) -> None:
    with paid_service() as base:
        payload = mcp_payment(base, chain, target["url"])
        first = paid_call(base, target["url"], payload)
        again = paid_call(base, target["url"], payload)
        header = base64.b64encode(json.dumps(payload).encode()).decode()
        over_http = paid_post(base, target, header)
    assert not first.is_error
    assert tool_reason(again) == "payment_already_used"
    assert over_http.status_code == 402 and over_http.json()["error"] == "payment_mismatch"  # made for the tool
    assert len(settled_transfers(chain)) == 1 and probes_of(raw) == 1
    assert chain.balance(chain.payer) == START_BALANCE - PRICE


def test_payment_used_on_the_route_is_refused_by_the_tool(
    paid_service: PaidService, chain: Chain, raw: RawServer, target: dict[str, str]
) -> None:
    with paid_service() as base:
        signature = payment_for(base, chain, target)
        assert paid_post(base, target, signature).status_code == 200
        again = paid_call(
            base, target["url"], decode(signature).model_dump(mode="json", by_alias=True, exclude_none=True)
        )
    assert tool_reason(again) == "payment_mismatch"  # made for the HTTP route, and used there
    assert len(settled_transfers(chain)) == 1 and probes_of(raw) == 1


def test_concurrent_copies_on_the_tool_buy_one_check(
    paid_service: PaidService, chain: Chain, raw: RawServer, target: dict[str, str]
) -> None:
    with paid_service() as base:
        payload = mcp_payment(base, chain, target["url"])
        results: list[Any] = []

        async def one() -> None:
            results.append(await call(base, "check_mcp_server", target, meta={"x402/payment": payload}))

        async def many() -> None:
            async with anyio.create_task_group() as group:
                for _ in range(8):
                    group.start_soon(one)

        anyio.run(many)
    served = [r for r in results if not r.is_error]
    assert len(served) == 1
    assert {tool_reason(r) for r in results if r.is_error} <= {"payment_in_use", "payment_already_used"}, [
        r.structured_content for r in results if r.is_error
    ]
    assert len(settled_transfers(chain)) == 1 and probes_of(raw) == 1


def test_tampered_payment_on_the_tool_moves_nothing(
    paid_service: PaidService, chain: Chain, raw: RawServer, target: dict[str, str]
) -> None:
    with paid_service() as base:
        payload = mcp_payment(base, chain, target["url"])
        payload["payload"]["authorization"]["value"] = str(PRICE * 100)
        result = paid_call(base, target["url"], payload)
        refused = paid_call(base, "ftp://example.com/mcp", mcp_payment(base, chain, target["url"]))
    assert tool_reason(result) in ("payment_mismatch", "payment_invalid")
    assert tool_reason(refused) == "scheme_not_https"
    assert not settled_transfers(chain) and chain.balance(chain.payer) == START_BALANCE
    assert probes_of(raw) == 0


def test_free_pool_on_the_tool_needs_no_payment(
    paid_service: PaidService, chain: Chain, target: dict[str, str]
) -> None:
    with paid_service() as base:
        result = anyio.run(lambda: call(base, "check_mcp_server", target, headers={"X-Free-Pool": "1"}))
    assert not result.is_error and not settled_transfers(chain)


@pytest.mark.parametrize(("sdk", "era"), [("sdk", "legacy"), ("client", "legacy"), ("client", "modern")])
def test_paid_tool_call_from_a_typescript_client(
    paid_service: PaidService, chain: Chain, raw: RawServer, target: dict[str, str], sdk: str, era: str
) -> None:
    """The x402 MCP flow as a TypeScript agent runs it (tests/npm/clients/call.mjs): the
    PaymentRequired document read from the refusal, signed by @x402/evm, paid once; the replay
    refused as a result the client reads."""
    key = "0x" + bytes(chain.payer.key).hex()
    with paid_service() as base:
        token = {"network": chain.network, "asset": chain.token.address, "maxAmountPerPayment": str(PRICE)}
        session = typescript_sdk(f"{base}/mcp", sdk, era, [Call("check_mcp_server", target, pay=key)], None, [token])
    (steps,) = session.reads
    unpaid, paid, replayed = steps["unpaid"], steps["paid"], steps["replayed"]
    assert unpaid.is_error and unpaid.reason == "payment_required" and unpaid.thrown is None
    assert paid.thrown is None and paid.is_error is False, paid.document
    assert paid.document["status"] == "ok" and paid.document["server"]["name"] == "mini"
    receipt = (paid.meta or {})["x402/payment-response"]
    assert receipt["success"] is True and receipt["network"] == chain.network
    assert receipt["payer"].lower() == chain.payer.address.lower()
    assert replayed.thrown is None and replayed.is_error and replayed.reason == "payment_already_used"
    assert chain.balance(chain.payer) == START_BALANCE - PRICE and chain.balance(chain.pay_to) == PRICE
    assert len(settled_transfers(chain)) == 1 and probes_of(raw) == 1
