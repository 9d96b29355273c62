"""Real Redis servers for tests.

``MCP_SONDE_TEST_REDIS_URL`` (default ``redis://127.0.0.1:6379/15``) names the shared server ``.ci/run``
starts; tests that need it skip when it does not answer, except under ``CI=true``, where they
fail. :class:`OwnRedis` starts a private ``redis-server`` on a free loopback port, for tests
that stop and restart Redis.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
from pathlib import Path

import pytest

from tests.servers.ports import free_port, wait_listening

DEFAULT_URL = "redis://127.0.0.1:6379/15"


def shared_redis_url() -> str:
    """The shared test Redis URL, or skip/fail when it does not answer."""
    url = os.environ.get("MCP_SONDE_TEST_REDIS_URL", DEFAULT_URL)
    host_port = url.split("//", 1)[1].split("/", 1)[0]
    host, _, port = host_port.rpartition(":")
    try:
        with socket.create_connection((host or "127.0.0.1", int(port or 6379)), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            if not sock.recv(16).startswith(b"+PONG"):
                raise OSError("not redis")
    except OSError as exc:
        message = f"no Redis answers at {url} ({exc}); .ci/run starts one"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return url


class OwnRedis:
    """A private redis-server on 127.0.0.1, started, stopped and restarted by the test."""

    def __init__(self, directory: Path, *, appendonly: bool = False) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            if os.environ.get("CI") == "true":
                pytest.fail("redis-server is not installed")
            pytest.skip("redis-server is not installed")
        self.binary = binary
        self.directory = directory
        self.port = free_port()
        self.appendonly = appendonly  # (with every write synced: a kill keeps all it answered)
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:<port>/0``."""
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start (or restart) the server on the same port."""
        command = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        command += ["--appendonly", "yes", "--appendfsync", "always"] if self.appendonly else ["--appendonly", "no"]
        command += ["--dir", str(self.directory)]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_listening(self.port, self.process)

    def stop(self) -> None:
        """Stop the server at once (SIGKILL: like a crash)."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)
        self.process = None
