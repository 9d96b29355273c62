"""Payments and the free pool while the shared store (Redis) does not answer: refused with
``shared_state_unavailable`` and nothing charged or drawn before settlement; after it the
answer is served and the payment never buys a second check."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import anyio
import httpx2
from starlette.types import ASGIApp, Receive, Scope, Send

from tests.conftest import reason_of
from tests.payment.chain import Chain, facilitator_app, pay
from tests.payment.conftest import PaidService
from tests.payment.test_paid_check import paid_post, settled_transfers
from tests.servers.redis_server import OwnRedis
from tests.servers.tcp_relay import Relay, relay
from tests.servers.uvicorn_thread import serve

FREE = {"X-Free-Pool": "1"}


def until(answer: Callable[[], httpx2.Response], status: int, within_s: float = 60) -> httpx2.Response:
    """Ask again until the answer has ``status`` (sized for a loaded machine; recovery takes about a second)."""
    deadline = time.monotonic() + within_s
    while True:
        response = answer()
        if response.status_code == status or time.monotonic() > deadline:
            return response
        time.sleep(0.1)


def test_free_checks_while_redis_is_down_are_refused_and_the_pool_goes_on_where_it_was(
    paid_service: PaidService, target: dict[str, str], tmp_path: Path
) -> None:
    redis = OwnRedis(tmp_path, appendonly=True)
    redis.start()
    try:
        with paid_service(redis_url=redis.url, free_pool_size=100, free_pool_per_ip=10) as base:

            def free() -> httpx2.Response:
                return httpx2.post(f"{base}/v1/mcp/check", json=target, headers=FREE, timeout=30)

            first = free()
            assert first.status_code == 200 and first.headers["x-free-pool-remaining"] == "9"
            redis.stop()
            refused = [free() for _ in range(5)]
            assert {r.status_code for r in refused} == {503}
            assert {reason_of(r) for r in refused} == {"shared_state_unavailable"}
            assert refused[-1].headers["retry-after"] == "5"
            assert "nothing was charged" in refused[-1].json()["detail"]
            assert httpx2.get(f"{base}/readyz").json()["store"]["ok"] is False
            redis.start()
            back = until(free, 200)
            assert back.status_code == 200
            assert back.headers["x-free-pool-remaining"] == "8"  # nothing drawn while down, nothing from zero
    finally:
        redis.stop()


def test_a_paid_check_while_redis_is_down_is_refused_and_nothing_is_settled(
    paid_service: PaidService, chain: Chain, target: dict[str, str], tmp_path: Path
) -> None:
    redis = OwnRedis(tmp_path, appendonly=True)
    redis.start()
    try:
        with paid_service(redis_url=redis.url) as base:
            unpaid = httpx2.post(f"{base}/v1/mcp/check", json=target)
            signature = anyio.run(pay, chain.payer, unpaid.headers["payment-required"])
            redis.stop()
            refused = paid_post(base, target, signature)
            assert refused.status_code == 503 and reason_of(refused) == "shared_state_unavailable"
            assert settled_transfers(chain) == []
            redis.start()
            bought = until(lambda: paid_post(base, target, signature), 200)
            assert bought.status_code == 200 and "payment-response" in bought.headers
            again = paid_post(base, target, signature)
            assert again.status_code == 402 and reason_of(again) == "payment_already_used"
            assert len(settled_transfers(chain)) == 1
    finally:
        redis.stop()


class CutsRedisOnSettle:
    """The facilitator, cutting the service's way to Redis as a settlement arrives."""

    def __init__(self, app: ASGIApp, link: Relay) -> None:
        self.app = app
        self.link = link

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == "/settle":
            self.link.cut()
        await self.app(scope, receive, send)


def test_a_settled_payment_is_served_when_redis_goes_away_during_settlement(
    paid_service: PaidService, chain: Chain, target: dict[str, str], tmp_path: Path
) -> None:
    redis = OwnRedis(tmp_path, appendonly=True)
    redis.start()
    try:
        with relay(("127.0.0.1", redis.port)) as link:
            link.open = True
            with serve(CutsRedisOnSettle(facilitator_app(chain), link)) as port:
                settings = {
                    "redis_url": f"redis://127.0.0.1:{link.port}/0",
                    "facilitator_url": f"http://127.0.0.1:{port}",
                }
                with paid_service(**settings) as base:
                    unpaid = httpx2.post(f"{base}/v1/mcp/check", json=target)
                    signature = anyio.run(pay, chain.payer, unpaid.headers["payment-required"])
                    bought = paid_post(base, target, signature)
                    assert bought.status_code == 200 and "payment-response" in bought.headers  # the money moved
                    link.open = True
                    again = until(lambda: paid_post(base, target, signature), 402)
                    assert again.status_code in (402, 409)  # in use until the lock expires, then used
                    assert reason_of(again) in ("payment_already_used", "payment_in_use")
                    assert len(settled_transfers(chain)) == 1
    finally:
        redis.stop()
