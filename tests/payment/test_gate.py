"""The payment gate (:mod:`app.payment.gate`) end to end: one spelling per authorization, the
result kept after an unknown settlement, an authorization used elsewhere."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.conftest import reason_of
from tests.payment.chain import PRICE, START_BALANCE, Chain, decode, encode, facilitator_app
from tests.payment.conftest import PaidService
from tests.payment.test_paid_check import paid_post, payment_for, probes_of, settled_transfers
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp
from tests.servers.uvicorn_thread import serve


@pytest.mark.parametrize(
    "spell",
    [
        lambda n: n.removeprefix("0x"),
        lambda n: "0x" + " ".join(n[2 + i : 4 + i] for i in range(0, 64, 2)),
        lambda n: n[:10] + "\t" + n[10:],
        lambda n: n.upper().replace("0X", "0x") + " ",
    ],
    ids=["no-prefix", "spaced-bytes", "tab", "trailing-space"],
)
def test_nonce_spelled_another_way_is_refused(
    paid_service: PaidService, chain: Chain, raw: RawServer, target: dict[str, str], spell: Any
) -> None:
    with paid_service() as base:
        payload = decode(payment_for(base, chain, target))
        authorization = payload.payload["authorization"] | {"nonce": spell(payload.payload["authorization"]["nonce"])}
        variant = encode(payload.model_copy(update={"payload": payload.payload | {"authorization": authorization}}))
        response = paid_post(base, target, variant)
    assert (response.status_code, reason_of(response)) == (400, "invalid_payment")
    assert probes_of(raw) == 0


def test_extra_payload_keys_are_refused(paid_service: PaidService, chain: Chain, target: dict[str, str]) -> None:
    with paid_service() as base:
        payload = decode(payment_for(base, chain, target))
        variant = encode(payload.model_copy(update={"payload": payload.payload | {"permit2Authorization": {}}}))
        response = paid_post(base, target, variant)
    assert (response.status_code, reason_of(response)) == (400, "invalid_payment")


def test_lone_surrogate_in_the_payment_is_a_400(
    paid_service: PaidService, chain: Chain, target: dict[str, str]
) -> None:
    import base64

    with paid_service() as base:
        payload = json.loads(base64.b64decode(payment_for(base, chain, target)))
        payload["resource"]["description"] = "\ud800"
        header = base64.b64encode(json.dumps(payload).encode()).decode()
        response = paid_post(base, target, header)
    assert (response.status_code, reason_of(response)) == (400, "invalid_payment")


def relay(chain: Chain, settle_status: int) -> Starlette:
    """The real facilitator; its first two /settle answers (the first after it really settled) are ``settle_status``."""
    real = facilitator_app(chain)
    failed = {"settle": 0}

    async def settle(request: Request) -> Response:
        body = await request.body()
        async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=real), base_url="http://f") as client:
            answer = await client.post("/settle", content=body, headers={"content-type": "application/json"})
        if failed["settle"] >= 2:
            return Response(answer.content, answer.status_code, media_type="application/json")
        failed["settle"] += 1
        return JSONResponse({"error": "gateway"}, status_code=settle_status)

    async def forward(request: Request) -> Response:
        body = await request.body()
        async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=real), base_url="http://f") as client:
            answer = await client.request(
                request.method, request.url.path, content=body, headers={"content-type": "application/json"}
            )
        return Response(answer.content, answer.status_code, media_type="application/json")

    return Starlette(
        routes=[
            Route("/settle", settle, methods=["POST"]),
            Route("/verify", forward, methods=["POST"]),
            Route("/supported", forward),
        ]
    )


def test_unknown_settlement_keeps_the_result_for_the_payer(
    paid_service: PaidService, chain: Chain, raw: RawServer, target: dict[str, str]
) -> None:
    with serve(relay(chain, 502)) as relay_port, paid_service(facilitator_url=f"http://127.0.0.1:{relay_port}") as base:
        signature = payment_for(base, chain, target)
        first = paid_post(base, target, signature)
        assert chain.balance(chain.pay_to) == PRICE  # the relay settled, then failed to say so
        again = paid_post(base, target, signature)
    assert (first.status_code, reason_of(first)) == (503, "settlement_unknown"), first.text
    assert again.status_code == 200 and again.json()["status"] == "ok"
    assert "payment-response" in again.headers
    assert probes_of(raw) == 1  # the kept result, not a second probe
    assert chain.balance(chain.payer) == START_BALANCE - PRICE and len(settled_transfers(chain)) == 1


def test_payment_settled_elsewhere_is_payment_already_used(
    paid_service: PaidService, chain: Chain, raw: RawServer
) -> None:
    """A store that lost the lock (or a copy racing the settlement): the facilitator's verify says
    the authorization is used, and the answer is ``payment_already_used``, not a vague refusal."""
    raw.routes["/mcp"] = MiniMcp()
    target = {"url": raw.url("/mcp")}
    with paid_service() as first:
        signature = payment_for(first, chain, target)
        assert paid_post(first, target, signature).status_code == 200
    with paid_service() as second:  # a fresh in-memory store: no lock for this payment
        again = paid_post(second, target, signature)
    assert again.status_code == 402 and again.json()["error"] == "payment_already_used"
    assert len(settled_transfers(chain)) == 1
