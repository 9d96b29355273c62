"""The ``mcp`` SDK side of benchmarks: its fixture servers in a separate process, and its client."""

from __future__ import annotations

import functools
import ssl
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Literal

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

from tests.servers.ports import free_port, wait_listening


@contextmanager
def sdk_fixture_process() -> Iterator[str]:
    """Run :func:`tests.servers.sdk_apps.build_app` under uvicorn in a child process; yield its base URL."""
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "uvicorn",
        "tests.servers.sdk_apps:build_app",
        "--factory",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--log-level",
        "warning",
    ]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, process)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


@functools.cache
def _shared_ssl_context() -> ssl.SSLContext:
    """One verifying SSL context for every SDK client of the process (as the probe's is shared)."""
    return ssl.create_default_context()


@asynccontextmanager
async def sdk_client(url: str, mode: Literal["auto", "legacy"]) -> AsyncIterator[Client]:
    """An ``mcp.Client`` for ``url`` on its own httpx2 client (the SDK's default timeouts) whose SSL
    context is built once per process: the baseline then does protocol work, not trust-store loads."""
    timeout = httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT)
    async with (
        httpx2.AsyncClient(verify=_shared_ssl_context(), timeout=timeout) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        yield client
