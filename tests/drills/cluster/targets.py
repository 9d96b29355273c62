"""The MCP servers the drill's checks and monitors probe, on one :class:`RawServer`.

- Checks (free, paid) and badges probe :class:`~tests.jobs.fleet.Counted` at a path of their own
  each (no two share a single flight), counted per path.
- Each monitor probes a :class:`Monitored` path of its own, which cycles through phases so the
  monitor has something to report: up, up with another tool list (``monitor.tools_changed``),
  then down twice as long (503 to ``initialize``: ``monitor.status_changed`` after two runs, and
  back). Its ``initialize`` requests, one per probe, are counted and held a moment, so a worker
  killed while a monitor's run is under way is killed mid-probe.
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass, field

from tests.jobs.fleet import Counted
from tests.servers.raw import RawServer, Request, send_json
from tests.servers.raw_mcp import MiniMcp

#: Seconds a monitor's ``initialize`` is held (a probe in flight for that long).
MONITOR_HOLD_S = 1.5


@dataclass
class Monitored:
    """A monitor's target (see the module docs): phase ``(elapsed / period_s + offset) % 4``."""

    offset: int
    period_s: float
    started: float = field(default_factory=time.monotonic)
    probes: int = 0
    in_flight: int = 0
    up: MiniMcp = field(default_factory=MiniMcp)
    changed: MiniMcp = field(default_factory=lambda: MiniMcp(tools=["alpha", "beta", "gamma"]))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def phase(self) -> int:
        return (int((time.monotonic() - self.started) / self.period_s) + self.offset) % 4

    def __call__(self, request: Request, conn: socket.socket) -> bool | None:
        phase = self.phase()
        if request.message.get("method") != "initialize":
            return (self.changed if phase == 1 else self.up)(request, conn)
        with self._lock:
            self.probes += 1
            self.in_flight += 1
        try:
            time.sleep(MONITOR_HOLD_S)
            if phase >= 2:
                error = {"code": -32000, "message": "down for the drill"}
                send_json(conn, 503, {"jsonrpc": "2.0", "id": request.message.get("id"), "error": error})
                return True
            return (self.changed if phase == 1 else self.up)(request, conn)
        finally:
            with self._lock:
                self.in_flight -= 1


@dataclass
class Targets:
    """The fixture server and its handlers."""

    raw: RawServer = field(default_factory=RawServer)
    checked: Counted = field(default_factory=Counted)
    monitored: list[Monitored] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _next: int = 0

    def start(self) -> None:
        self.raw.start()

    def stop(self) -> None:
        self.raw.stop()

    def check_url(self, kind: str) -> str:
        """A fresh path of ``kind`` (``free``, ``paid``, ``badge``) served by :attr:`checked`."""
        with self._lock:
            self._next += 1
            path = f"/{kind}/{self._next}"
        self.raw.routes[path] = self.checked
        return self.raw.url(path)

    def monitor_url(self, index: int, period_s: float) -> str:
        target = Monitored(offset=index, period_s=period_s)
        self.monitored.append(target)
        path = f"/monitor/{index}"
        self.raw.routes[path] = target
        return self.raw.url(path)

    def monitor_probes(self) -> int:
        return sum(target.probes for target in self.monitored)

    def monitor_in_flight(self) -> int:
        return sum(target.in_flight for target in self.monitored)
