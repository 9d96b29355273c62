"""The service's log set-up: access lines on stdout, written without a flush per line but never held back."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

CODE = """
import logging.config, sys, time
from app.logs import SERVICE_LOGGING
from app.service.accesslog import AccessLogger
logging.config.dictConfig(SERVICE_LOGGING)
access = AccessLogger(frozenset({"/badge/mcp"}))
scope = {"method": "GET", "path": "/badge/mcp", "client": ("203.0.113.9", 5000)}
for _ in range(3):
    access.write(scope, 200, time.perf_counter())
access.write({"method": "GET", "path": "/x?secret=1", "client": None}, 404, time.perf_counter())
sys.stderr.write("written\\n"); sys.stderr.flush()
time.sleep(float(sys.argv[1]))
"""


def test_access_lines_reach_stdout_within_the_flush_interval_while_the_process_runs() -> None:
    process = subprocess.Popen([sys.executable, "-c", CODE, "5"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert process.stderr is not None and process.stdout is not None
        assert process.stderr.readline() == b"written\n"
        started = time.monotonic()
        lines = [json.loads(process.stdout.readline()) for _ in range(4)]
        assert time.monotonic() - started < 2.0  # flushed by the handler's thread, not at exit
    finally:
        process.kill()
        process.communicate()
    assert lines[0] == {"method": "GET", "path": "/badge/mcp", "status": 200, "ms": 0.0, "client": "203.0.113.9"}
    assert lines[3]["path"] == "<unmatched>" and lines[3]["client"] is None


def test_access_lines_are_written_when_the_process_exits_at_once() -> None:
    done = subprocess.run([sys.executable, "-c", CODE, "0"], capture_output=True, timeout=30, check=True)
    assert len(done.stdout.splitlines()) == 4


@pytest.mark.parametrize("unbuffered", ["", "1"])
def test_serve_stopped_by_sigterm_writes_every_access_line(unbuffered: str) -> None:
    """uvicorn ends by re-raising SIGTERM (no atexit): the service flushes at shutdown."""
    import os
    import signal
    from pathlib import Path

    import httpx2

    from tests.servers.ports import free_port, wait_listening

    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONUNBUFFERED", "REDIS_URL", "MCP_SONDE_REDIS_URL")}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = unbuffered
    command = [str(Path(sys.executable).parent / "mcp-sonde"), "serve", "--port", str(port)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, process)
        for _ in range(5):
            assert httpx2.get(f"http://127.0.0.1:{port}/healthz?secret=1", timeout=10).status_code == 200
        process.send_signal(signal.SIGTERM)
        out, _ = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    lines = [json.loads(line) for line in out.splitlines() if line.startswith(b"{")]
    assert [(line["path"], line["status"]) for line in lines] == [("/healthz", 200)] * 5
    assert b"secret" not in out
