"""Interop with a fastmcp server (PyPI, pinned), Streamable HTTP and SSE."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastmcp import FastMCP

from app.probe import probe
from app.settings import Settings
from tests.servers.uvicorn_thread import serve

pytestmark = pytest.mark.anyio


def fixture_server() -> FastMCP:
    server = FastMCP("fm-fixture", version="9.9.9")

    @server.tool
    def greet(name: str) -> str:
        """Say hello."""
        return f"hello {name}"

    @server.tool
    def square(x: int) -> int:
        """Square a number."""
        return x * x

    return server


@pytest.fixture(scope="module")
def fastmcp_http() -> Iterator[int]:
    with serve(fixture_server().http_app(path="/mcp")) as port:
        yield port


@pytest.fixture(scope="module")
def fastmcp_sse() -> Iterator[int]:
    with serve(fixture_server().http_app(transport="sse")) as port:
        yield port


async def test_streamable_http(fastmcp_http: int, dev_settings: Settings) -> None:
    result = await probe(f"http://127.0.0.1:{fastmcp_http}/mcp", settings=dev_settings)
    assert (result.status, result.era, result.protocol_version) == ("ok", "modern", "2026-07-28")
    assert result.server is not None and (result.server.name, result.server.version) == ("fm-fixture", "9.9.9")
    assert result.tools is not None and sorted(result.tools.names) == ["greet", "square"]


async def test_light(fastmcp_http: int, dev_settings: Settings) -> None:
    result = await probe(f"http://127.0.0.1:{fastmcp_http}/mcp", light=True, settings=dev_settings)
    assert (result.status, result.tools) == ("ok", None)


async def test_sse(fastmcp_sse: int, dev_settings: Settings) -> None:
    result = await probe(f"http://127.0.0.1:{fastmcp_sse}/sse", settings=dev_settings)
    assert (result.status, result.transport) == ("ok", "sse")
    assert result.server is not None and result.server.name == "fm-fixture"
    assert result.tools is not None and sorted(result.tools.names) == ["greet", "square"]
