"""The facilitator's ``GET /supported`` against the configured payment options: at start, in
``/readyz`` and before a paid check, with the real x402 facilitator on loopback."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from starlette.applications import Starlette

from app.http import create_app
from app.payment.supported import FacilitatorUnsupported, Kind
from app.settings import PaymentNetwork, Settings
from tests.conftest import Service
from tests.payment.chain import START_BALANCE, Chain
from tests.payment.conftest import PaidService
from tests.payment.test_paid_check import paid_post, payment_for, probes_of
from tests.servers.ports import free_port
from tests.servers.raw import RawServer, send
from tests.servers.raw import Request as RawRequest
from tests.servers.raw_mcp import MiniMcp

ROOT = Path(__file__).resolve().parents[2]
PAY_TO = "0x" + "11" * 20


@pytest.fixture
def target(raw: RawServer) -> dict[str, str]:
    raw.routes["/mcp"] = MiniMcp()
    return {"url": raw.url("/mcp")}


def kind(network: str, scheme: str = "exact", version: int = 2) -> dict[str, Any]:
    return {"x402Version": version, "scheme": scheme, "network": network}


def paid_settings(chain: Chain, facilitator_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "allow_private": True,
        "redis_url": None,
        "pay_to": chain.pay_to.address,
        "payment_networks": [PaymentNetwork(network=chain.network, asset=chain.token.address)],
        "facilitator_url": facilitator_url,
    }
    return Settings(**(values | overrides))


def start(app: Starlette) -> None:
    """Run the app's start-up (its lifespan) and shut it down again."""

    async def run() -> None:
        async with app.router.lifespan_context(app):
            pass

    anyio.run(run)


def closed_port_url() -> str:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    sock.close()
    return url


def test_a_facilitator_that_supports_every_option(paid_service: PaidService, chain: Chain) -> None:
    with paid_service() as base:
        ready = httpx2.get(f"{base}/readyz").json()
    assert ready["status"] == "ready"
    assert ready["payments"] == {"enabled": True, "facilitator_ok": True, "supported": "ok"}


def test_a_wildcard_kind_covers_the_network(paid_service: PaidService, chain: Chain) -> None:
    chain.state["supported"] = [kind("solana:*"), kind("eip155:*")]
    with paid_service() as base:
        ready = httpx2.get(f"{base}/readyz").json()
    assert ready["payments"]["supported"] == "ok" and ready["status"] == "ready"


@pytest.mark.parametrize(
    ("offered", "missing"),
    [
        (lambda net: [kind("eip155:1")], lambda net: Kind(net, "exact", 2)),
        (lambda net: [kind(net, scheme="upto")], lambda net: Kind(net, "exact", 2)),
        (lambda net: [kind(net, version=1)], lambda net: Kind(net, "exact", 2)),
        (lambda net: [], lambda net: Kind(net, "exact", 2)),
    ],
    ids=["other-network", "other-scheme", "x402-v1-only", "nothing"],
)
def test_start_fails_when_an_option_is_not_supported(
    chain: Chain, facilitator_url: str, offered: Any, missing: Any
) -> None:
    chain.state["supported"] = offered(chain.network)
    second = PaymentNetwork(network="eip155:1", asset="0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48")
    networks = [PaymentNetwork(network=chain.network, asset=chain.token.address), second]
    app = create_app(paid_settings(chain, facilitator_url, payment_networks=networks))
    with pytest.raises(FacilitatorUnsupported) as failure:
        start(app)
    assert failure.value.reason == "facilitator_unsupported"
    assert missing(chain.network) in failure.value.missing
    assert str(missing(chain.network)) in failure.value.message and "\n" not in failure.value.message
    if chain.state["supported"] == [kind("eip155:1")]:
        assert failure.value.missing == (Kind(chain.network, "exact", 2),)  # eip155:1 is supported


def test_serve_exits_22_with_one_line_naming_what_is_missing(
    chain: Chain, facilitator_url: str, tmp_path: Path
) -> None:
    """The real command: the failed start is `serve`'s start-up failure, exit code 22 (in a data
    directory of its own: the user's default one may hold a history of an older schema)."""
    chain.state["supported"] = [kind("eip155:1")]
    host_port = facilitator_url.removeprefix("http://")
    networks = json.dumps([{"network": chain.network, "asset": chain.token.address}])
    env = {key: value for key, value in os.environ.items() if not key.startswith("MCP_SONDE_") and key != "REDIS_URL"}
    env |= {
        "MCP_SONDE_PAY_TO": chain.pay_to.address,
        "MCP_SONDE_PAYMENT_NETWORKS": networks,
        "MCP_SONDE_FACILITATOR_URL": f"http://user:sekret@{host_port}",  # credentials stay out of the log
        "MCP_SONDE_PORT": str(free_port()),
        "MCP_SONDE_DATA_DIR": str(tmp_path),
    }
    done = subprocess.run(
        [sys.executable, "-m", "app", "serve"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 22, done.stderr
    records = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    (line,) = [r["message"] for r in records if r["level"] == "ERROR" and r["logger"] == "mcp_sonde.service"]
    assert line == (
        f"paid checks cannot start (facilitator_unsupported): facilitator "
        f"http://{host_port} does not support {chain.network} exact x402 v2; use a facilitator that does, "
        f"or leave that network out of MCP_SONDE_PAYMENT_NETWORKS"
    )
    assert "sekret" not in done.stderr
    assert chain.state["supported_calls"] == 1


def test_unreachable_facilitator_at_start_is_one_line_and_readyz_says_unknown(
    chain: Chain, paid_service: PaidService, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="mcp_sonde.payment")
    with paid_service(facilitator_url=closed_port_url()) as base:
        ready = httpx2.get(f"{base}/readyz").json()
    assert ready["status"] == "degraded"
    assert ready["payments"] == {"enabled": True, "facilitator_ok": False, "supported": "unknown"}
    (record,) = [r for r in caplog.records if r.name == "mcp_sonde.payment"]
    assert "gave no usable answer to /supported at start" in record.getMessage()
    assert "\n" not in record.getMessage()


@pytest.mark.parametrize("status", [404, 503])
def test_a_non_200_supported_answer_is_unknown_not_unsupported(
    paid_service: PaidService, chain: Chain, status: int
) -> None:
    chain.state["supported"] = status
    with paid_service() as base:
        ready = httpx2.get(f"{base}/readyz").json()
    assert ready["payments"] == {"enabled": True, "facilitator_ok": False, "supported": "unknown"}


def test_readyz_does_not_hammer_the_facilitator(paid_service: PaidService, chain: Chain) -> None:
    with paid_service() as base:
        answers = [httpx2.get(f"{base}/readyz").json()["payments"]["supported"] for _ in range(20)]
    assert answers == ["ok"] * 20
    assert chain.state["supported_calls"] == 1  # the start's answer, kept for a minute


@pytest.fixture
def hostile_supported() -> Iterator[int]:
    """``/supported`` that sends 1 MB of JSON, or trickles a byte every half second."""
    server = RawServer()

    @server.route("/huge/supported")
    @server.route("/trickle/supported")
    def supported(request: RawRequest, conn: socket.socket) -> bool:
        if request.path.startswith("/huge"):
            body = b'{"kinds": [' + b",".join([json.dumps(kind("eip155:1")).encode()] * 20_000) + b"]}"
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n")
            conn.sendall(f"content-length: {len(body)}\r\n\r\n".encode() + body)
            return True
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


@pytest.mark.parametrize("variant", ["huge", "trickle"])
def test_supported_answer_is_capped_and_bounded(
    paid_service: PaidService, hostile_supported: int, variant: str
) -> None:
    """A huge answer is not read past the cap; a trickling one not past the budget: both "unknown"."""
    url = f"http://127.0.0.1:{hostile_supported}/{variant}"
    started = time.monotonic()
    with paid_service(facilitator_url=url, facilitator_timeout_s=1.0) as base:
        took = time.monotonic() - started
        ready = httpx2.get(f"{base}/readyz").json()
    assert took < 3
    assert ready["payments"]["supported"] == "unknown"


def test_option_dropped_after_start_refuses_paid_checks_before_verifying(
    paid_service: PaidService,
    chain: Chain,
    raw: RawServer,
    target: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Unknown at start (the service starts); the next answer lacks our network: a paid check is
    503 facilitator_unsupported, nothing verified or charged, and /readyz lists what is missing."""
    import app.payment.supported as supported

    monkeypatch.setattr(supported, "FAILURE_TTL_S", 0.2)
    chain.state["supported"] = 503
    with paid_service() as base:
        signature = payment_for(base, chain, target)
        chain.state["supported"] = [kind("eip155:1")]
        time.sleep(0.3)
        response = paid_post(base, target, signature)
        ready = httpx2.get(f"{base}/readyz").json()
        chain.state["supported"] = None  # supported again (after the answer's minute)
    assert (response.status_code, response.json()["reason"]) == (503, "facilitator_unsupported")
    assert response.json()["detail"] == (
        f"the payment facilitator does not support {chain.network} exact x402 v2 at the moment; nothing was charged"
    )
    assert response.headers["retry-after"] == "60"
    assert chain.state["calls"] == {"verify": 0, "settle": 0}
    assert chain.balance(chain.payer) == START_BALANCE and probes_of(raw) == 0
    assert ready["status"] == "degraded"
    assert ready["payments"]["supported"] == [kind(chain.network)]


def test_a_readyz_burst_asks_the_facilitator_once(service: Service, raw: RawServer) -> None:
    """/readyz is unauthenticated and not rate limited: 100 of them, 50 at a time, against a
    facilitator that takes 1 s to answer /supported, are at most two facilitator requests (the
    start's, and one joined by every concurrent /readyz), not one per caller."""
    import concurrent.futures

    kinds = [{"x402Version": 2, "scheme": "exact", "network": n} for n in ("eip155:8453", "eip155:137")]
    body = json.dumps({"kinds": kinds, "extensions": [], "signers": {}}).encode()

    @raw.route("/supported")
    def supported(request: RawRequest, conn: socket.socket) -> None:
        time.sleep(1.0)
        send(conn, 200, {"content-type": "application/json"}, body)

    with service(pay_to=PAY_TO, facilitator_url=raw.url("")) as base, concurrent.futures.ThreadPoolExecutor(50) as pool:
        list(pool.map(lambda _n: httpx2.get(f"{base}/readyz", timeout=30), range(100)))
    assert len(raw.requests_to("/supported")) <= 2, f"{len(raw.requests_to('/supported'))} GET /supported"
