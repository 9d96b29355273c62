"""Loopback ports for fixture servers run as child processes."""

from __future__ import annotations

import socket
import subprocess
import time


def free_port() -> int:
    """A free loopback TCP port."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


#: Seconds a server may take to listen: ``serve`` has taken 25 to 31 s on a loaded 2-core machine.
LISTEN_S = 90.0


def wait_listening(port: int, process: subprocess.Popen[bytes] | None = None, timeout_s: float = LISTEN_S) -> None:
    """Wait until 127.0.0.1:``port`` accepts connections (at once when ``process`` exits first).

    Raises:
        RuntimeError: not listening within ``timeout_s`` seconds, or ``process`` exited.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            if time.monotonic() > deadline or (process is not None and process.poll() is not None):
                why = (
                    f"exited with status {process.returncode}"
                    if process is not None and process.poll() is not None
                    else f"not within {timeout_s:g} s"
                )
                raise RuntimeError(f"nothing listens on 127.0.0.1:{port}: {why}") from None
            time.sleep(0.05)


def wait_ready(port: int, process: subprocess.Popen[bytes] | None = None, timeout_s: float = 120.0) -> None:
    """Wait until ``mcp-sonde serve`` on 127.0.0.1:``port`` has built the service: its ``/readyz``
    answers anything but 503 ``starting`` (it answers that while it starts; sized for a loaded
    machine).

    Raises:
        RuntimeError: not ready within ``timeout_s`` seconds, or ``process`` exited.
    """
    import httpx2

    wait_listening(port, process, timeout_s)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            answer = httpx2.get(f"http://127.0.0.1:{port}/readyz", timeout=10)
            if answer.status_code != 503 or answer.json().get("status") != "starting":
                return
        except (httpx2.HTTPError, ValueError):
            pass
        if time.monotonic() > deadline or (process is not None and process.poll() is not None):
            raise RuntimeError(f"mcp-sonde on 127.0.0.1:{port} never became ready")
        time.sleep(0.05)
