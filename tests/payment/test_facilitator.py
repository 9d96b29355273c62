"""The facilitator client (:mod:`app.payment.facilitator`): one budget per call, only a 200 says yes."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.conftest import reason_of
from tests.payment.chain import Chain
from tests.payment.conftest import PaidService
from tests.payment.test_paid_check import paid_post, payment_for
from tests.servers.raw import RawServer
from tests.servers.raw import Request as RawRequest
from tests.servers.uvicorn_thread import serve


@pytest.fixture
def trickling_facilitator() -> Iterator[int]:
    server = RawServer()

    @server.route("/verify")
    def trickle(request: RawRequest, conn: socket.socket) -> bool:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n")
        for _ in range(30):
            conn.sendall(b" ")
            time.sleep(0.5)
        return True

    server.start()
    try:
        yield server.port
    finally:
        server.stop()


def test_facilitator_that_trickles_is_bounded(
    paid_service: PaidService, chain: Chain, target: dict[str, str], trickling_facilitator: int
) -> None:
    with paid_service() as working:
        signature = payment_for(working, chain, target)
    with paid_service(facilitator_url=f"http://127.0.0.1:{trickling_facilitator}", facilitator_timeout_s=1.0) as base:
        started = time.monotonic()
        response = paid_post(base, target, signature)
    assert time.monotonic() - started < 3
    assert (response.status_code, response.json()["reason"]) == (503, "facilitator_unavailable")


def test_facilitator_4xx_claiming_valid_is_a_refusal(
    paid_service: PaidService, chain: Chain, target: dict[str, str]
) -> None:
    async def lying(request: Request) -> Response:
        return JSONResponse({"isValid": True, "success": True}, status_code=400)

    app = Starlette(routes=[Route("/verify", lying, methods=["POST"]), Route("/settle", lying, methods=["POST"])])
    with paid_service() as working:
        signature = payment_for(working, chain, target)
    with serve(app) as port, paid_service(facilitator_url=f"http://127.0.0.1:{port}") as base:
        response = paid_post(base, target, signature)
    assert (response.status_code, reason_of(response)) == (402, "payment_invalid")
