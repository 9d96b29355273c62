"""The cluster's processes (compose.yaml's services) on loopback: start, kill, restart, stop.

Every ``mcp-sonde`` process gets the same settings (:meth:`Cluster.env`): one Redis, one
PostgreSQL database, one data directory (one signing key, made before any starts, so no two
instances make one each), the offline chain's payment settings, a short scheduler tick and job
times (as ``tests/e2e/conftest.py``'s ``ENGINE``), and the staging switch for monitors every
``interval_s`` seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx2

from app.attest.keyring import keyring_of
from app.settings import Settings
from tests.drills.cluster.nginx import ROOT, nginx_proc
from tests.drills.cluster.plan import Plan
from tests.drills.cluster.postgres import OwnPostgres
from tests.drills.cluster.process import Proc
from tests.servers.ports import free_port, wait_listening, wait_ready
from tests.servers.redis_server import OwnRedis

SONDE = str(ROOT / ".venv" / "bin" / "mcp-sonde")
#: Start-up bounds on a loaded 2-core machine, seconds.
START_S = 180.0


class DrillRedis(OwnRedis):
    """:class:`OwnRedis` with its append-only file (every write synced) and a log file of its own."""

    def start(self) -> None:
        command = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes",
                   "--appendfsync", "always", "--dir", str(self.directory),
                   "--logfile", str(self.directory / "redis.log")]  # fmt: skip
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_listening(self.port, self.process, timeout_s=60)


@dataclass
class Payments:
    """The offline chain's settings for the instances."""

    pay_to: str
    network: str
    asset: str
    facilitator: str


@dataclass
class Cluster:
    """Everything but the fixtures: nginx, the API instances, workers, schedulers, Redis, PostgreSQL."""

    root: Path
    plan: Plan
    payments: Payments
    webhook_port: int = 0
    port: int = field(default_factory=free_port)
    api_ports: list[int] = field(default_factory=lambda: [free_port(), free_port()])
    api: list[Proc] = field(default_factory=list)
    workers: list[Proc] = field(default_factory=list)
    schedulers: list[Proc] = field(default_factory=list)
    nginx: Proc | None = None
    redis: DrillRedis | None = None
    postgres: OwnPostgres | None = None

    @property
    def base(self) -> str:
        """nginx's address: every request of the drill's load goes there."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def data(self) -> Path:
        return self.root / "data"

    def env(self) -> dict[str, str]:
        assert self.redis is not None and self.postgres is not None
        plan, paid = self.plan, self.payments
        values = {
            "ALLOW_PRIVATE": "true", "STAGING": "true",
            "REDIS_URL": self.redis.url, "DATABASE_URL": self.postgres.url, "DATA_DIR": str(self.data),
            "TRUSTED_PROXIES": '["127.0.0.1/32"]', "PUBLIC_URL": self.base,
            "FREE_POOL_SIZE": str(plan.pool), "FREE_POOL_PER_IP": str(plan.share),
            "RATE_LIMIT": "100000/minute", "LOOKUP_RATE_LIMIT": "100000/minute",
            "BADGE_RATE_LIMIT": "100000/minute", "BADGE_GLOBAL_LIMIT": "100000/minute", "BADGE_TTL_S": "10",
            "HOST_CONCURRENCY": "100", "HOST_CLIENT_CONCURRENCY": "100", "HOST_START_INTERVAL_S": "0",
            "PAY_TO": paid.pay_to, "FACILITATOR_URL": paid.facilitator, "PAYMENT_TIMEOUT_S": "3600",
            "PAYMENT_NETWORKS": json.dumps([{"network": paid.network, "asset": paid.asset}]),
            "MONITOR_RUN_PRICE_USD": "0.001", "MONITOR_BLOCK_RUNS": str(plan.block_runs),
            "MONITOR_RUN_LOST_S": "60",
            "SCHEDULER_TICK_S": "0.5", "SCHEDULER_LOCK_TTL_S": "6", "PROBE_TIMEOUT_S": "8", "STEP_TIMEOUT_S": "3",
            "SESSION_END_TIMEOUT_S": "1", "JOB_REDELIVERY_IDLE_S": "15", "JOB_TURN_WAIT_S": "5",
            "JOB_HISTORY_WAIT_S": "5", "WORKER_DRAIN_S": "5", "WEBHOOK_TIMEOUT_S": "5",
            "LOG_FORMAT": "plain",
        }  # fmt: skip
        inherited = {k: v for k, v in os.environ.items() if not k.startswith("MCP_SONDE_") and k != "REDIS_URL"}
        return inherited | {f"MCP_SONDE_{name}": value for name, value in values.items()}

    def processes(self) -> Iterator[Proc]:
        yield from self.api
        yield from self.workers
        yield from self.schedulers
        if self.nginx is not None:
            yield self.nginx

    # --- start-up ----------------------------------------------------------------------------
    def up(self) -> None:
        """Start every part, in compose.yaml's order (the databases, the migration, the instances, nginx)."""
        logs = self.root / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        self.postgres = OwnPostgres(free_port())
        self.postgres.init()
        self.postgres.start()
        (self.root / "redis").mkdir(exist_ok=True)
        self.redis = DrillRedis(self.root / "redis", appendonly=True)
        self.redis.start()
        env = self.env()
        migrate = subprocess.run([SONDE, "db", "upgrade"], env=env, capture_output=True, timeout=300, check=False)
        (logs / "migrate.log").write_bytes(migrate.stdout + migrate.stderr)
        if migrate.returncode != 0:
            raise RuntimeError(f"mcp-sonde db upgrade failed: {(migrate.stdout + migrate.stderr).decode()[-2000:]}")
        keyring_of(Settings(data_dir=self.data, allow_private=True))  # (the one key, before any instance starts)
        for n, port in enumerate(self.api_ports, start=1):
            argv = [SONDE, "serve", "--allow-private", "--port", str(port)]
            self.api.append(Proc(f"api-{n}", argv, env, logs / f"api-{n}.log"))
        for n in (1, 2):
            self.workers.append(Proc(f"worker-{n}", [SONDE, "worker", "--concurrency", "8"], env,
                                     logs / f"worker-{n}.log"))  # fmt: skip
            self.schedulers.append(Proc(f"scheduler-{n}", [SONDE, "scheduler"], env, logs / f"scheduler-{n}.log"))
        for proc in self.api:
            proc.start()
        for proc in self.api:
            self.wait_api(proc)
        for proc in self.workers:
            proc.start()
        self.schedulers[0].start()
        self.wait_log(self.schedulers[0], "this scheduler is active", START_S)
        self.schedulers[1].start()
        self.wait_log(self.schedulers[1], "standing by", START_S)
        self.nginx = nginx_proc(self.root / "nginx", self.api_ports, self.port)
        self.nginx.start()
        wait_listening(self.port, self.nginx.process, timeout_s=60)
        self.wait_through_nginx()

    def wait_api(self, proc: Proc) -> None:
        port = self.api_ports[self.api.index(proc)]
        wait_ready(port, proc.process, timeout_s=START_S)

    def wait_through_nginx(self) -> None:
        deadline = time.monotonic() + START_S
        while True:
            try:
                if httpx2.get(f"{self.base}/readyz", timeout=10).status_code == 200:
                    return
            except httpx2.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("nginx never answered /readyz with 200")
            time.sleep(0.2)

    @staticmethod
    def wait_log(proc: Proc, text: str, timeout_s: float) -> float:
        """Seconds until ``text`` is in what ``proc`` wrote since its latest start."""
        started = time.monotonic()
        while text not in Cluster.since_start(proc):
            if time.monotonic() - started > timeout_s or not proc.alive:
                raise RuntimeError(f"{proc.name} never logged {text!r}:\n{proc.tail()}")
            time.sleep(0.1)
        return time.monotonic() - started

    @staticmethod
    def since_start(proc: Proc) -> str:
        text = proc.log.read_text(errors="replace")
        return text.rsplit(f"--- {proc.name}: start ", 1)[-1]

    def active_scheduler(self) -> Proc:
        """The scheduler that logged last that it is active (since its latest start)."""
        for proc in self.schedulers:
            said = self.since_start(proc)
            if proc.alive and said.rfind("this scheduler is active") > said.rfind("standing by"):
                return proc
        raise RuntimeError("no scheduler says it is active")

    def readyz(self, port: int) -> dict[str, object]:
        """An instance's /readyz document, asked directly (``{}`` when it does not answer)."""
        try:
            document: dict[str, object] = httpx2.get(f"http://127.0.0.1:{port}/readyz", timeout=5).json()
        except (httpx2.HTTPError, ValueError):
            return {}
        return document

    # --- shut-down ---------------------------------------------------------------------------
    def down(self) -> dict[str, int | None]:
        """The graceful stop (SIGTERM), schedulers first, then the instances (their outboxes drain into
        PostgreSQL), the workers (their jobs in hand finish), nginx; the exit codes."""
        codes: dict[str, int | None] = {}
        for group in (self.schedulers, self.api, self.workers):
            for proc in group:
                proc.terminate()
            for proc in group:
                codes[proc.name] = proc.finish(timeout_s=90)
        if self.nginx is not None:
            codes["nginx"] = self.nginx.stop(timeout_s=30)
        return codes

    def cleanup(self) -> None:
        """Whatever still runs is killed; Redis and PostgreSQL stop (idempotent: runs on every exit)."""
        for proc in self.processes():
            proc.kill()
        if self.redis is not None:
            self.redis.stop()
        if self.postgres is not None:
            self.postgres.remove()
