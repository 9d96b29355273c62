"""The service's log set-up: access lines on stdout, written without a flush per line but never held back."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest

CODE = """
import logging.config, sys, time
from app.logs import service_logging
from app.http.middleware.accesslog import AccessLogger
logging.config.dictConfig(service_logging())
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
    stamp = lines[0].pop("timestamp")
    assert lines[0] == {
        "level": "INFO",
        "logger": "mcp_sonde.access",
        "method": "GET",
        "path": "/badge/mcp",
        "status": 200,
        "ms": 0.0,
        "client": "203.0.113.9",
    }
    assert datetime.fromisoformat(stamp).utcoffset() == timedelta(0)
    assert abs(datetime.fromisoformat(stamp).timestamp() - time.time()) < 30
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

    from tests.servers.ports import free_port, wait_ready

    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONUNBUFFERED", "REDIS_URL", "MCP_SONDE_REDIS_URL")}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = unbuffered
    command = [str(Path(sys.executable).parent / "mcp-sonde"), "serve", "--port", str(port)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        wait_ready(port, process)
        for _ in range(5):
            assert httpx2.get(f"http://127.0.0.1:{port}/healthz?secret=1", timeout=10).status_code == 200
        process.send_signal(signal.SIGTERM)
        out, _ = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    lines = [json.loads(line) for line in out.splitlines() if line.startswith(b"{")]
    assert [(line["path"], line["status"]) for line in lines if line["path"] != "/readyz"] == [("/healthz", 200)] * 5
    assert b"secret" not in out


RECORDS = """
import logging, logging.config, sys
from app.logs import REQUEST_ID, service_logging
logging.config.dictConfig(service_logging(sys.argv[1]))
logging.getLogger("uvicorn.error").info("Started server process [%d]", 42, extra={"color_message": "coloured"})
logging.getLogger("mcp_sonde.service").warning("outside a request")
token = REQUEST_ID.set("req-1")
logging.getLogger("mcp_sonde.probe").warning("inside %s", "a request")
logging.getLogger("app.suite.hygiene").warning("through the root logger")
logging.getLogger("some.library").warning("a library's warning")
logging.getLogger("some.library").info("below the root's level")
try:
    raise ValueError("boom")
except ValueError:
    logging.getLogger("mcp_sonde.service").exception("unhandled error")
REQUEST_ID.reset(token)
"""


def test_every_logger_writes_one_json_object_per_line() -> None:
    done = subprocess.run([sys.executable, "-c", RECORDS, "json"], capture_output=True, timeout=30, check=True)
    records = [json.loads(line) for line in done.stderr.decode().splitlines()]
    assert [(r["logger"], r["level"], r["message"]) for r in records] == [
        ("uvicorn.error", "INFO", "Started server process [42]"),
        ("mcp_sonde.service", "WARNING", "outside a request"),
        ("mcp_sonde.probe", "WARNING", "inside a request"),
        ("app.suite.hygiene", "WARNING", "through the root logger"),
        ("some.library", "WARNING", "a library's warning"),
        ("mcp_sonde.service", "ERROR", "unhandled error"),
    ]
    assert [r.get("request_id") for r in records] == [None, None, "req-1", "req-1", "req-1", "req-1"]
    for record in records:
        assert set(record) <= {"timestamp", "level", "logger", "message", "request_id", "exception"}
        stamp = datetime.fromisoformat(record["timestamp"])
        assert stamp.utcoffset() == timedelta(0) and abs(stamp.timestamp() - time.time()) < 30
    assert next(iter(records[0])) == "timestamp"
    assert records[-1]["exception"].startswith("Traceback") and "ValueError: boom" in records[-1]["exception"]
    assert done.stdout == b""


def test_plain_logs_are_one_readable_line_per_record() -> None:
    done = subprocess.run([sys.executable, "-c", RECORDS, "plain"], capture_output=True, timeout=30, check=True)
    lines = done.stderr.decode().splitlines()
    assert lines[1].endswith(" WARNING mcp_sonde.service [-] outside a request")
    assert lines[2].endswith(" WARNING mcp_sonde.probe [req-1] inside a request")
    assert not lines[0].startswith("{")


PLAIN_ACCESS = """
import logging.config, time
from app.logs import REQUEST_ID, service_logging
from app.http.middleware.accesslog import AccessLogger
logging.config.dictConfig(service_logging("plain"))
REQUEST_ID.set("req-2")
AccessLogger(frozenset({"/healthz"}), plain=True).write(
    {"method": "GET", "path": "/healthz", "client": ("203.0.113.9", 1)}, 200, time.perf_counter()
)
"""


def test_plain_access_lines_are_readable_too() -> None:
    done = subprocess.run([sys.executable, "-c", PLAIN_ACCESS], capture_output=True, timeout=30, check=True)
    line = done.stdout.decode().strip()
    assert re.search(r" INFO mcp_sonde\.access \[req-2\] GET /healthz 200 [0-9.]+ ms 203\.0\.113\.9$", line), line


UNREAD = """
import logging, logging.config, pathlib, sys, time
from app.logs import service_logging
from app.http.middleware.accesslog import AccessLogger
logging.config.dictConfig(service_logging())
access = AccessLogger(frozenset({"/badge/mcp"}))
scope = {"method": "GET", "path": "/badge/mcp", "client": ("203.0.113.9", 5000)}
for n in range(int(sys.argv[2])):
    access.write(scope, 200, time.perf_counter())
    if n % 10 == 0:
        logging.getLogger("mcp_sonde.service").warning("record %d", n)
pathlib.Path(sys.argv[1]).touch()
time.sleep(1)
"""


def test_a_stream_nobody_reads_never_blocks_the_logger(tmp_path: Path) -> None:
    """Regression: a full stdout pipe (a log collector that stalls) froze the event loop, so a
    service whose output nobody read stopped answering. Lines beyond the queue are dropped and
    counted instead, and the count is reported once the stream is read again."""
    marker, lines = tmp_path / "written", 60_000  # about 9 MB of access lines: far beyond a pipe's 64 KiB
    process = subprocess.Popen(
        [sys.executable, "-c", UNREAD, str(marker), str(lines)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():  # (neither pipe is read until the child says it has written all)
            assert process.poll() is None and time.monotonic() < deadline, "the logger waited on its reader"
            time.sleep(0.1)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0
    written = [json.loads(line) for line in out.splitlines()]
    assert 0 < len(written) < lines and {line["path"] for line in written} == {"/badge/mcp"}
    records = [json.loads(line) for line in err.splitlines()]
    dropped = [r["message"] for r in records if r["logger"] == "mcp_sonde.logs"]
    counted = sum(int(message.split()[0]) for message in dropped if "stdout" in message)
    assert counted == lines - len(written), dropped
