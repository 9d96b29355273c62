"""Start the ``mcp`` SDK fixture servers in a separate process for benchmarks."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

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
