"""The x402 ``payment-identifier`` extension end to end: the same payment again is the same
answer, another payment under the same id is a conflict, on the embedded store and on Redis."""

from __future__ import annotations

import base64
import json
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import anyio
import httpx2
import pytest
import redis
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from x402.extensions.payment_identifier import declare_payment_identifier_extension
from x402.schemas import SettleResponse

from app.payment.identifier import MAX_ANSWER_TTL_S, Answer, Claim, Identifiers, answer_ttl
from app.store import MemoryStore, key
from tests.conftest import reason_of
from tests.payment.chain import PRICE, START_BALANCE, Chain, decode, encode, facilitator_app, pay
from tests.payment.conftest import PaidService
from tests.payment.test_paid_check import paid_post, probes_of, settled_transfers
from tests.servers.raw import RawServer
from tests.servers.raw import Request as RawRequest
from tests.servers.raw_mcp import MiniMcp
from tests.servers.redis_server import shared_redis_url
from tests.servers.uvicorn_thread import serve

ID = "pay_7d5d747be160e280504c099d984bcfe0"


@pytest.fixture
def target(raw: RawServer) -> dict[str, str]:
    inner = MiniMcp()

    @raw.route("/mcp")
    def slowish(request: RawRequest, conn: socket.socket) -> None:
        if request.message.get("method") == "server/discover":
            time.sleep(0.5)  # long enough for a concurrent copy to arrive while the first runs
        inner(request, conn)

    return {"url": raw.url("/mcp")}


def payment_with_id(base: str, chain: Chain, url: dict[str, str], identifier: str = ID) -> str:
    unpaid = httpx2.post(f"{base}/v1/mcp/check", json=url)
    assert unpaid.status_code == 402
    return anyio.run(pay, chain.payer, unpaid.headers["payment-required"], identifier)


Instances = Callable[[], AbstractContextManager[tuple[str, str]]]


@pytest.fixture(params=["memory", "redis"])
def instances(request: pytest.FixtureRequest, paid_service: PaidService) -> Instances:
    """``with instances() as (a, b):`` the same service twice (embedded store), or two
    services sharing one Redis."""

    @contextmanager
    def run() -> Iterator[tuple[str, str]]:
        if request.param == "memory":
            with paid_service() as base:
                yield base, base
            return
        shared = {"redis_url": shared_redis_url(), "redis_namespace": f"test-{uuid.uuid4().hex[:12]}:"}
        with paid_service(**shared) as a, paid_service(**shared) as b:
            yield a, b

    return run


def test_402_declares_the_payment_identifier_extension(paid_service: PaidService, target: dict[str, str]) -> None:
    with paid_service() as base:
        response = httpx2.post(f"{base}/v1/mcp/check", json=target)
        discovery = httpx2.get(f"{base}/.well-known/x402").json()
    document = json.loads(base64.b64decode(response.headers["payment-required"]))
    declared = declare_payment_identifier_extension(required=False)
    assert document["extensions"]["payment-identifier"] == declared
    assert discovery["resources"][0]["extensions"]["payment-identifier"] == declared


def test_same_identifier_and_payment_again_is_the_same_answer(
    instances: Instances, chain: Chain, raw: RawServer, target: dict[str, str]
) -> None:
    """The answer is lost; the client sends the same PAYMENT-SIGNATURE again (to another
    instance, with Redis): the same result and PAYMENT-RESPONSE, no second probe or charge."""
    with instances() as (first_base, second_base):
        signature = payment_with_id(first_base, chain, target)
        first = paid_post(first_base, target, signature)
        again = paid_post(second_base, target, signature)
    assert first.status_code == 200, first.text
    assert again.status_code == 200, again.text
    assert again.content == first.content
    assert again.headers["payment-response"] == first.headers["payment-response"]
    assert json.loads(base64.b64decode(again.headers["payment-response"]))["success"] is True
    assert probes_of(raw) == 1
    assert chain.state["calls"] == {"verify": 1, "settle": 1}
    assert chain.balance(chain.payer) == START_BALANCE - PRICE and len(settled_transfers(chain)) == 1


def test_two_concurrent_copies_make_one_probe_and_one_settlement(
    instances: Instances, chain: Chain, raw: RawServer, target: dict[str, str]
) -> None:
    with instances() as (first_base, second_base):
        signature = payment_with_id(first_base, chain, target)
        responses: dict[str, httpx2.Response] = {}

        def send(name: str, base: str) -> None:
            responses[name] = paid_post(base, target, signature)

        threads = [threading.Thread(target=send, args=pair) for pair in (("a", first_base), ("b", second_base))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    a, b = responses["a"], responses["b"]
    assert (a.status_code, b.status_code) == (200, 200), (a.text, b.text)
    assert a.content == b.content and a.headers["payment-response"] == b.headers["payment-response"]
    assert probes_of(raw) == 1
    assert chain.state["calls"]["settle"] == 1
    assert chain.balance(chain.payer) == START_BALANCE - PRICE and len(settled_transfers(chain)) == 1


@pytest.mark.parametrize("change", ["another-payment", "another-url", "another-baseline", "malleated-signature"])
def test_same_identifier_with_another_payment_or_request_is_a_conflict(
    paid_service: PaidService, chain: Chain, raw: RawServer, target: dict[str, str], change: str
) -> None:
    with paid_service() as base:
        signature = payment_with_id(base, chain, target)
        assert paid_post(base, target, signature).status_code == 200
        url: dict[str, Any] = dict(target)
        if change == "another-payment":
            signature = payment_with_id(base, chain, target)  # a new authorization, the same id
        elif change == "another-url":
            url = {"url": raw.url("/mcp?other=1")}
        elif change == "another-baseline":  # what a paid check buys includes what it is compared with
            url = target | {"baseline": {"tools": [{"name": "alpha"}]}}
        else:
            from tests.payment.chain import malleate

            payload = decode(signature)
            twin = payload.payload | {"signature": malleate(payload.payload["signature"])}
            signature = encode(payload.model_copy(update={"payload": twin}))
        conflict = paid_post(base, url, signature)
    assert (conflict.status_code, reason_of(conflict)) == (409, "payment_identifier_conflict")
    assert chain.state["calls"] == {"verify": 1, "settle": 1}  # nothing verified for the conflict
    assert chain.balance(chain.payer) == START_BALANCE - PRICE and probes_of(raw) == 1


@pytest.mark.parametrize(
    "extension",
    [
        {"info": {"required": False, "id": "short"}},
        {"info": {"required": False, "id": "pay_" + "x" * 125}},
        {"info": {"required": False, "id": "pay_has spaces_1234"}},
        {"info": {"required": False, "id": "pay_7d5d747be160e280\n"}},  # the package's own check lets it through
        {"info": {"required": False, "id": 1234567890123456789}},
        {"info": {"id": ID}},
        {"info": "pay"},
        "pay_7d5d747be160e280504c099d984bcfe0",
    ],
    ids=["too-short", "too-long", "space", "trailing-newline", "not-a-string", "no-required", "info-string", "string"],
)
def test_malformed_identifier_is_a_400_and_nothing_is_verified(
    paid_service: PaidService, chain: Chain, target: dict[str, str], extension: Any
) -> None:
    with paid_service() as base:
        payload = decode(payment_with_id(base, chain, target))
        extensions = (payload.extensions or {}) | {"payment-identifier": extension}
        response = paid_post(base, target, encode(payload.model_copy(update={"extensions": extensions})))
    assert (response.status_code, reason_of(response)) == (400, "invalid_payment_identifier")
    assert "payment-required" in response.headers
    assert chain.state["calls"] == {"verify": 0, "settle": 0}


def test_the_echoed_declaration_without_an_id_is_an_ordinary_payment(
    paid_service: PaidService, chain: Chain, target: dict[str, str]
) -> None:
    """The x402 client echoes the declaration; with no id the payment follows the usual rules."""
    with paid_service() as base:
        unpaid = httpx2.post(f"{base}/v1/mcp/check", json=target)
        signature = anyio.run(pay, chain.payer, unpaid.headers["payment-required"])
        assert "payment-identifier" in (decode(signature).extensions or {})
        first = paid_post(base, target, signature)
        again = paid_post(base, target, signature)
    assert first.status_code == 200
    assert (again.status_code, reason_of(again)) == (402, "payment_already_used")


def flaky_verify(chain: Chain) -> Starlette:
    """The real facilitator, except that its first ``/verify`` answers 503."""
    real = facilitator_app(chain)
    failed = {"verify": False}

    async def forward(request: Request) -> Response:
        if request.url.path == "/verify" and not failed["verify"]:
            failed["verify"] = True
            return JSONResponse({"error": "down"}, status_code=503)
        async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=real), base_url="http://f") as client:
            answer = await client.request(
                request.method,
                request.url.path,
                content=await request.body(),
                headers={"content-type": "application/json"},
            )
        return Response(answer.content, answer.status_code, media_type="application/json")

    return Starlette(
        routes=[Route(path, forward, methods=["GET", "POST"]) for path in ("/verify", "/settle", "/supported")]
    )


def test_a_check_not_served_frees_the_identifier(
    paid_service: PaidService, chain: Chain, raw: RawServer, target: dict[str, str]
) -> None:
    with serve(flaky_verify(chain)) as port, paid_service(facilitator_url=f"http://127.0.0.1:{port}") as base:
        signature = payment_with_id(base, chain, target)
        first = paid_post(base, target, signature)
        again = paid_post(base, target, signature)
    assert (first.status_code, reason_of(first)) == (503, "facilitator_unavailable")
    assert again.status_code == 200, again.text
    assert chain.balance(chain.payer) == START_BALANCE - PRICE and probes_of(raw) == 1


def test_the_stored_answer_holds_no_credential(paid_service: PaidService, chain: Chain, target: dict[str, str]) -> None:
    namespace = f"test-{uuid.uuid4().hex[:12]}:"
    body: dict[str, Any] = target | {"headers": {"Authorization": "Bearer sekret-token-123"}}
    with paid_service(redis_url=shared_redis_url(), redis_namespace=namespace) as base:
        signature = payment_with_id(base, chain, target)
        first = paid_post(base, body, signature)
        again = paid_post(base, body, signature)
        other_token = paid_post(base, {**target, "headers": {"Authorization": "Bearer another"}}, signature)
    assert first.status_code == 200 and again.content == first.content
    assert (other_token.status_code, reason_of(other_token)) == (409, "payment_identifier_conflict")
    client = redis.Redis.from_url(shared_redis_url())
    try:
        names = [name for name in client.scan_iter(match=f"{namespace}*") if client.type(name) == b"string"]
        values = [value for value in map(client.get, names) if isinstance(value, bytes)]
    finally:
        client.close()
    assert any(value.startswith(b"served\n") for value in values)
    assert not any(b"sekret-token-123" in value for value in values)


def test_answers_are_state_the_embedded_store_never_evicts() -> None:
    """A full embedded store evicts badge entries, never a payment identifier's answer."""
    store = MemoryStore(max_keys=50, max_bytes=1024 * 1024)
    identifiers = Identifiers(store, "https://sonde.example.org/v1/mcp/check", claim_ttl_s=60, wait_s=1)
    receipt = SettleResponse(success=True, transaction="0x" + "ab" * 32, network="eip155:8453", payer="0x" + "1" * 40)

    async def run() -> tuple[Claim | Answer, Claim | Answer]:
        claim = await identifiers.claim(ID, "f" * 64)
        assert isinstance(claim, Claim)
        await identifiers.record(claim, Answer(b'{"status": "ok"}', receipt), 3600)
        for n in range(500):
            await store.set(key("badge", str(n)), b"x" * 4096, 3600)
        return await identifiers.claim(ID, "f" * 64), await identifiers.claim(ID[::-1], "e" * 64)

    kept, fresh = anyio.run(run)
    assert kept == Answer(b'{"status": "ok"}', receipt)
    assert isinstance(fresh, Claim)


def test_answer_lifetime_covers_the_authorization_window() -> None:
    now = 1_800_000_000.0
    assert answer_ttl(720, str(int(now) + 3600), now) == 3660  # until validBefore (and a minute)
    assert answer_ttl(720, str(int(now) + 30), now) == 720  # at least the payment lock's lifetime
    assert answer_ttl(720, "9" * 78, now) == MAX_ANSWER_TTL_S  # bounded, whatever the payer signed
