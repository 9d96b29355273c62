"""Workers and schedulers as real ``mcp-sonde`` processes, and an MCP fixture that counts, per
host, the requests in flight and when each probe started (measured at the server, not in ours)."""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import redis

from tests.servers.raw import Request
from tests.servers.raw_mcp import MiniMcp


@dataclass
class Counted:
    """A raw route handler: :class:`MiniMcp`, whose ``initialize`` answer takes ``hold_s``, with
    per-host counters: probes in flight (a probe's ``initialize`` is in flight while the server
    holds it: every probe sends one), the most at once, and when each probe started."""

    hold_s: float = 0.0
    mcp: MiniMcp = field(default_factory=MiniMcp)
    in_flight: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    most: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    starts: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    paths: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: Request, conn: socket.socket) -> bool | None:
        if request.message.get("method") != "initialize":
            return self.mcp(request, conn)
        host = request.headers.get("host", "").rsplit(":", 1)[0]
        with self._lock:
            self.in_flight[host] += 1
            self.most[host] = max(self.most[host], self.in_flight[host])
            self.starts[host].append(time.monotonic())
            self.paths[request.path] += 1
        try:
            time.sleep(self.hold_s)
            return self.mcp(request, conn)
        finally:
            with self._lock:
                self.in_flight[host] -= 1

    def least_gap(self, host: str) -> float:
        """The shortest time between two probe starts at ``host`` (inf with fewer than two)."""
        with self._lock:
            times = sorted(self.starts[host])
        return min((b - a for a, b in itertools.pairwise(times)), default=float("inf"))


@dataclass
class Fleet:
    """``mcp-sonde worker`` and ``scheduler`` processes sharing one Redis, queue and database."""

    directory: Path
    redis_url: str
    database_url: str
    extra: Mapping[str, str] = field(default_factory=dict)
    queue: str = field(default_factory=lambda: f"mcp-sonde-test:{uuid.uuid4().hex}")
    namespace: str = field(default_factory=lambda: f"t{uuid.uuid4().hex[:10]}:")
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    _logs: list[BinaryIO] = field(default_factory=list)

    def env(self) -> dict[str, str]:
        values = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "MCP_SONDE_REDIS_URL")}
        values |= {
            "REDIS_URL": self.redis_url,
            "MCP_SONDE_DATABASE_URL": self.database_url,
            "MCP_SONDE_JOBS_QUEUE": self.queue,
            "MCP_SONDE_REDIS_NAMESPACE": self.namespace,
            "MCP_SONDE_ALLOW_PRIVATE": "true",
            "MCP_SONDE_PROBE_TIMEOUT_S": "8",
            "MCP_SONDE_STEP_TIMEOUT_S": "5",
            "MCP_SONDE_LOG_FORMAT": "plain",
        }
        return values | dict(self.extra)

    def start(self, command: str, *args: str) -> subprocess.Popen[bytes]:
        """Start ``mcp-sonde <command> <args>``, its output into a file of the directory."""
        log = (self.directory / f"{command}-{len(self.processes)}.log").open("wb")
        self._logs.append(log)
        process = subprocess.Popen(
            [sys.executable, "-m", "app", command, *args], env=self.env(), stdout=log, stderr=subprocess.STDOUT
        )
        self.processes.append(process)
        return process

    def logs(self) -> str:
        """Everything the processes wrote."""
        return "\n".join(path.read_text(errors="replace") for path in sorted(self.directory.glob("*.log")))

    @staticmethod
    def kill(process: subprocess.Popen[bytes]) -> None:
        """SIGKILL: a crash."""
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)

    def stop(self) -> list[int]:
        """SIGTERM every process still running; their exit codes."""
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        codes = []
        for process in self.processes:
            try:
                codes.append(process.wait(timeout=40))
            except subprocess.TimeoutExpired:
                process.kill()
                codes.append(process.wait())
        for log in self._logs:
            log.close()
        with contextlib.suppress(redis.RedisError):  # (the queue of this fleet's own, off the shared Redis)
            client = redis.Redis.from_url(self.redis_url)
            client.delete(self.queue)
            client.close()
        return codes


def wait_for(condition: object, timeout_s: float, what: str) -> float:
    """Poll ``condition()`` until true; the seconds it took (AssertionError past ``timeout_s``)."""
    assert callable(condition)
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout_s, f"{what}: not within {timeout_s:g} s"
        time.sleep(0.1)
    return time.monotonic() - started
