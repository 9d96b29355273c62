"""A fresh offline chain, its facilitator on loopback, and the service configured to take payments."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import pytest

from app.http import create_app
from app.settings import PaymentNetwork, Settings
from tests.payment.chain import Chain, facilitator_app, new_chain
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp
from tests.servers.uvicorn_thread import serve


@pytest.fixture
def chain() -> Chain:
    return new_chain()


@pytest.fixture
def facilitator_url(chain: Chain) -> Iterator[str]:
    with serve(facilitator_app(chain)) as port:
        yield f"http://127.0.0.1:{port}"


PaidService = Callable[..., AbstractContextManager[str]]


@pytest.fixture
def paid_service(chain: Chain, facilitator_url: str) -> PaidService:
    """``with paid_service(**settings) as base:`` the API taking payments on the offline chain."""

    @contextmanager
    def run(resolver: Any = None, tracer_provider: Any = None, **overrides: Any) -> Iterator[str]:
        values: dict[str, Any] = {
            "allow_private": True,
            "probe_timeout_s": 8.0,
            "step_timeout_s": 3.0,
            "host_start_interval_s": 0.0,
            "redis_url": None,
            "pay_to": chain.pay_to.address,
            "payment_networks": [PaymentNetwork(network=chain.network, asset=chain.token.address)],
            "facilitator_url": facilitator_url,
            "public_url": "https://sonde.example.org",
            "rate_limit": "1000/minute",
        }
        values.update(overrides)
        app = create_app(Settings(**values), resolver=resolver, tracer_provider=tracer_provider)
        with serve(app, proxy_headers=False) as port:
            yield f"http://127.0.0.1:{port}"

    return run


@pytest.fixture
def target(raw: RawServer) -> dict[str, str]:
    raw.routes["/mcp"] = MiniMcp()
    return {"url": raw.url("/mcp")}
