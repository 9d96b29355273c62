"""Shared fixtures: real MCP servers on loopback and probe settings for local targets."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.settings import Settings
from tests.servers.raw import RawServer
from tests.servers.sdk_apps import build_app
from tests.servers.uvicorn_thread import serve


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
