"""Fixtures for probe tests: TLS servers reached as public hosts, and a scripted legacy HTTP+SSE server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import trustme

from app.settings import Settings
from tests.servers.network import server_context
from tests.servers.raw import RawServer
from tests.servers.raw_sse import MiniSse


@pytest.fixture
def ca(tmp_path: Path) -> tuple[trustme.CA, Path]:
    """A test CA and the path of its PEM bundle."""
    authority = trustme.CA()
    bundle = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(bundle))
    return authority, bundle


@pytest.fixture
def public_tls(ca: tuple[trustme.CA, Path]) -> Iterator[tuple[RawServer, Settings]]:
    """A TLS server for ``mcp.example.com`` and production settings that trust its CA.

    Tests reach it as ``https://mcp.example.com`` at a public address through
    :class:`tests.servers.network.LoopbackNat`.
    """
    authority, bundle = ca
    server = RawServer(ssl_context=server_context(authority, "mcp.example.com"))
    server.start()
    try:
        yield server, Settings(ca_bundle=str(bundle), probe_timeout_s=8.0, step_timeout_s=3.0)
    finally:
        server.stop()


@pytest.fixture
def sse(raw: RawServer) -> Iterator[MiniSse]:
    """A scripted legacy HTTP+SSE server on ``raw`` (``/sse`` and ``/messages``)."""
    server = MiniSse()
    server.install(raw)
    yield server
    server.stop()
