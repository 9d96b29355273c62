"""Interop with @modelcontextprotocol/server-everything (npm, pinned in tests/npm), both transports."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from app.probe import probe
from app.settings import Settings
from tests.servers.node import server_everything

pytestmark = pytest.mark.anyio

EVERYTHING_TOOLS = 13  # with no client capabilities declared


async def test_streamable_http(dev_settings: Settings) -> None:
    with server_everything("streamableHttp") as port:
        result = await probe(f"http://127.0.0.1:{port}/mcp", settings=dev_settings)
    assert (result.status, result.era, result.transport) == ("ok", "legacy", "streamable_http")
    assert result.protocol_version == "2025-11-25"
    assert result.server is not None
    assert (result.server.name, result.server.title) == ("mcp-servers/everything", "Everything Reference Server")
    assert result.tools is not None and result.tools.count == EVERYTHING_TOOLS and "echo" in result.tools.names
    assert result.session is not None and result.session.issued and result.session.end_status == 200
    assert result.capabilities is not None and "tools" in result.capabilities


async def test_legacy_sse(dev_settings: Settings) -> None:
    with server_everything("sse") as port:
        result = await probe(f"http://127.0.0.1:{port}/sse", settings=dev_settings)
    assert (result.status, result.era, result.transport) == ("ok", "legacy", "sse")
    assert result.server is not None and result.server.name == "mcp-servers/everything"
    assert result.tools is not None and result.tools.count == EVERYTHING_TOOLS


def test_cli_against_both_transports() -> None:
    for mode, path in (("streamableHttp", "/mcp"), ("sse", "/sse")):
        with server_everything(mode) as port:
            completed = subprocess.run(
                [sys.executable, "-m", "app", "check", f"http://127.0.0.1:{port}{path}", "--json", "--allow-private"],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
        assert completed.returncode == 0, completed.stderr
        result = json.loads(completed.stdout)
        assert result["server"]["name"] == "mcp-servers/everything"
        assert result["tools"]["count"] == EVERYTHING_TOOLS
        assert result["transport"] == ("sse" if mode == "sse" else "streamable_http")
