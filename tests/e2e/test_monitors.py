"""A monitor end to end on each broker: bought through ``POST /v1/monitors`` with one payment on
the offline chain, its runs made by the job engine, and a webhook receiver on loopback that
gets a signed ``monitor.status_changed`` once the server has been down two runs in a row
(verified with ``standardwebhooks``), as ``GET /v1/monitors/{id}/deliveries`` shows."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import anyio
import httpx2
from sqlalchemy import select, update
from standardwebhooks import Webhook
from starlette.applications import Starlette
from starlette.requests import Request as StarletteRequest
from starlette.responses import Response
from starlette.routing import Route

from app.db.tables.monitors import monitor_runs, monitors
from tests.e2e.conftest import Deploy, Deployment, wait_until
from tests.payment.chain import Chain, pay
from tests.servers.raw import RawServer, Request, send
from tests.servers.raw_mcp import MiniMcp
from tests.servers.uvicorn_thread import serve

#: A block of 5 runs at USD 0.001 (the offline chain's test payment).
BLOCK = {"monitor_run_price_usd": "0.001", "monitor_block_runs": "5"}


@contextmanager
def receiver() -> Iterator[tuple[str, list[tuple[bytes, dict[str, str]]]]]:
    """A webhook receiver on loopback: its URL, and every ``(body, headers)`` it was sent."""
    received: list[tuple[bytes, dict[str, str]]] = []
    lock = threading.Lock()

    async def hook(request: StarletteRequest) -> Response:
        body = await request.body()
        with lock:
            received.append((body, dict(request.headers)))
        return Response(status_code=204)

    with serve(Starlette(routes=[Route("/hook", hook, methods=["POST"])])) as port:
        yield f"http://127.0.0.1:{port}/hook", received


class Switchable:
    """An MCP server that answers 503 to everything while ``down``."""

    def __init__(self) -> None:
        self.mcp = MiniMcp()
        self.down = False

    def __call__(self, request: Request, conn: socket.socket) -> bool | None:
        if self.down:
            send(conn, 503, {"content-length": "0"})
            return True
        return self.mcp(request, conn)


def finished_runs(deployment: Deployment, monitor_id: str) -> list[tuple[str, str | None]]:
    query = (
        select(monitor_runs.c.run_id, monitor_runs.c.status)
        .join(monitors, monitors.c.id == monitor_runs.c.monitor)
        .where(monitors.c.monitor_id == monitor_id, monitor_runs.c.finished_at.is_not(None))
        .order_by(monitor_runs.c.id)
    )
    return [(row[0], row[1]) for row in deployment.sql(query)]


def due_now(deployment: Deployment, monitor_id: str) -> None:
    """The test's clock: the monitor's next run due now (its 300 s interval passed)."""
    deployment.sql(update(monitors).where(monitors.c.monitor_id == monitor_id).values(next_due_at=datetime.now(UTC)))


def test_a_paid_monitor_alerts_a_signed_status_change_after_two_down_runs(
    deploy: Deploy, raw: RawServer, chain: Chain
) -> None:
    server = Switchable()
    raw.routes["/mcp"] = server
    url = raw.url("/mcp")
    with receiver() as (hook, received), deploy(**BLOCK) as deployment:
        body = {"url": url, "interval_s": 300, "webhook": hook}
        offered = httpx2.post(f"{deployment.base}/v1/monitors", json=body, timeout=30)
        assert offered.status_code == 402, offered.text
        signature = anyio.run(pay, chain.payer, offered.headers["payment-required"])
        made = httpx2.post(f"{deployment.base}/v1/monitors", json=body, headers={"PAYMENT-SIGNATURE": signature},
                           timeout=30)  # fmt: skip
        assert made.status_code == 201, made.text
        created: dict[str, Any] = made.json()
        monitor_id, token, secret = created["monitor_id"], created["token"], created["webhook_secret"]
        statuses = []
        for n, down in enumerate((False, True, True), start=1):
            server.down = down
            if n > 1:
                due_now(deployment, monitor_id)
            wait_until(lambda n=n: len(finished_runs(deployment, monitor_id)) == n, 60, f"run {n}", deployment)  # type: ignore[misc]
            statuses = [status for _run, status in finished_runs(deployment, monitor_id)]
        wait_until(lambda: received, 60, "the webhook delivered", deployment)
        auth = {"authorization": f"Bearer {token}"}
        deliveries = httpx2.get(f"{deployment.base}/v1/monitors/{monitor_id}/deliveries", headers=auth, timeout=10)
        read = httpx2.get(f"{deployment.base}/v1/monitors/{monitor_id}", headers=auth, timeout=10).json()
    assert statuses[0] == "ok" and statuses[1] == statuses[2] != "ok", statuses
    [(sent, headers)] = received  # (ok, down: no alert; down again: one)
    event = Webhook(secret).verify(sent, headers)
    assert event["type"] == "monitor.status_changed" and event["data"]["monitor_id"] == monitor_id
    assert (event["data"]["from"], event["data"]["to"]) == ("ok", statuses[2])
    assert json.loads(sent) == event and headers["webhook-id"]
    [logged] = deliveries.json()["deliveries"]
    assert logged["event"] == "monitor.status_changed" and logged["state"] == "delivered", logged
    assert logged["delivery_id"] == headers["webhook-id"]
    assert read["runs_left"] == 2 and read["state"] == "active"
