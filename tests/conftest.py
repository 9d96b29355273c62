"""Shared fixtures: real MCP servers on loopback and probe settings for local targets."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import pytest

from app.guard import Resolver
from app.http import create_app
from app.settings import Settings
from tests.servers.raw import RawServer
from tests.servers.sdk_apps import build_app
from tests.servers.uvicorn_thread import serve


def pytest_configure(config: pytest.Config) -> None:
    """Each test process keeps its key document and signing keys in a directory of its own
    (services and ``mcp-sonde serve`` subprocesses read ``MCP_SONDE_DATA_DIR``), never in the
    user's data directory."""
    os.environ.setdefault("MCP_SONDE_DATA_DIR", tempfile.mkdtemp(prefix="mcp-sonde-test-data-"))


#: Development settings for services that check loopback servers: private targets allowed,
#: short budgets, no pacing between probes, no Redis.
LOOPBACK: dict[str, Any] = {
    "allow_private": True,
    "probe_timeout_s": 8.0,
    "step_timeout_s": 3.0,
    "session_end_timeout_s": 1.0,
    "host_start_interval_s": 0.0,
    "redis_url": None,
    # (a test that sets payTo and no facilitator of its own meets a closed loopback port, never the
    # public facilitator the setting defaults to)
    "facilitator_url": "http://127.0.0.1:9/",
}


@pytest.fixture
def anyio_backend() -> str:
    """Run async tests on asyncio."""
    return "asyncio"


@pytest.fixture(scope="session")
def sdk_base() -> Iterator[str]:
    """Base URL of the ``mcp`` SDK fixture servers (see :mod:`tests.servers.sdk_apps`)."""
    with serve(build_app()) as port:
        yield f"http://127.0.0.1:{port}"


@pytest.fixture
def raw() -> Iterator[RawServer]:
    """A fresh scripted raw HTTP server for one test."""
    server = RawServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def dev_settings() -> Settings:
    """Probe settings for loopback targets, with short budgets so hostile fixtures end fast."""
    return Settings(allow_private=True, probe_timeout_s=8.0, step_timeout_s=3.0, session_end_timeout_s=1.0)


Service = Callable[..., AbstractContextManager[str]]


@pytest.fixture
def service() -> Service:
    """``with service(resolver=..., network_backend=..., **settings) as base_url:`` runs the API.

    Settings are development ones (loopback targets allowed, no Redis) plus the overrides.
    """

    @contextmanager
    def run(resolver: Resolver | None = None, network_backend: Any = None, **overrides: Any) -> Iterator[str]:
        values: dict[str, Any] = {**LOOPBACK, **overrides}
        app = create_app(Settings(**values), resolver=resolver, network_backend=network_backend)
        # as `mcp-sonde serve` does: the app, not uvicorn, decides which proxies to believe
        with serve(app, proxy_headers=False) as port:
            yield f"http://127.0.0.1:{port}"

    return run


def reason_of(response: Any) -> str:
    """The stable reason of an error answer: ``reason`` of a problem details object (RFC 9457),
    or ``error`` of an x402 402 document."""
    document = response.json()
    if response.status_code == 402:
        return str(document["error"])
    assert response.headers["content-type"] == "application/problem+json"
    assert document["type"].endswith("/problems/" + document["reason"]) and document["status"] == response.status_code
    return str(document["reason"])
