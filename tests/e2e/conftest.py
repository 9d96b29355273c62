"""End-to-end fixtures: the whole service with its job engine, on each of the engine's brokers.

:func:`engine_mode` is parametrised ``redis`` and ``embedded``:

- ``redis``: the API (``create_app``, no embedded jobs since ``REDIS_URL`` is set) in this
  process, and real ``mcp-sonde worker`` and ``mcp-sonde scheduler`` processes
  (:class:`tests.jobs.fleet.Fleet`) on the test Redis (db 15, a queue and key namespace of the
  test's own) and a PostgreSQL database of the test's own;
- ``embedded``: ``create_app`` without Redis, as ``mcp-sonde serve`` runs it: the scheduler and
  a worker in the app's own process on taskiq's in-memory broker, on a SQLite history file.

Both run the same settings (:data:`ENGINE`), the same parts (:data:`app.jobs.parts.PARTS`), and
take payments on the offline chain of :mod:`tests.payment.conftest`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from sqlalchemy.sql import Executable

from app.attest.keyring import keyring_of
from app.db import migrate
from app.db.engine import open_engine
from app.http import create_app
from app.settings import PaymentNetwork, Settings
from tests.jobs.conftest import postgres_database
from tests.jobs.fleet import Fleet
from tests.payment.chain import Chain
from tests.payment.conftest import chain, facilitator_url
from tests.servers.redis_server import shared_redis_url
from tests.servers.uvicorn_thread import serve

__all__ = ["chain", "facilitator_url"]

#: Settings of every process of a test (as ``MCP_SONDE_*`` values): a fast tick, loopback targets.
ENGINE: dict[str, str] = {
    "allow_private": "true",
    "scheduler_tick_s": "0.3",
    "host_start_interval_s": "0",
    "probe_timeout_s": "8",
    "step_timeout_s": "3",
    "session_end_timeout_s": "1",
    "job_redelivery_idle_s": "30",
    "job_turn_wait_s": "10",
    "job_history_wait_s": "5",
    "worker_drain_s": "5",
}


@dataclass
class Deployment:
    """One running deployment: the API's base URL, its history database, and its settings."""

    mode: str
    base: str
    database_url: str
    settings: Settings
    fleet: Fleet | None = None

    def sql(self, statement: Executable) -> list[Any]:
        """Run one statement on the history database (reads, and the test's clock: due times moved)."""

        async def run() -> list[Any]:
            engine = open_engine(self.database_url)
            try:
                async with engine.begin() as db:
                    result = await db.execute(statement)
                    return list(result.all()) if result.returns_rows else []
            finally:
                await engine.dispose()

        return asyncio.run(run())

    def logs(self) -> str:
        """What the worker and scheduler processes wrote (redis mode)."""
        return self.fleet.logs() if self.fleet is not None else ""


Deploy = Callable[..., AbstractContextManager[Deployment]]


def wait_until(condition: Callable[[], object], timeout_s: float, what: str, deployment: Deployment) -> float:
    """Poll ``condition()`` every 0.2 s until truthy; the seconds it took."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout_s, f"{what}: not within {timeout_s:g} s\n{deployment.logs()}"
        time.sleep(0.2)
    return time.monotonic() - started


@pytest.fixture(params=["redis", "embedded"])
def engine_mode(request: pytest.FixtureRequest) -> str:
    """Which broker the job engine runs on."""
    return str(request.param)


@pytest.fixture
def deploy(engine_mode: str, chain: Chain, facilitator_url: str, tmp_path: Path) -> Deploy:
    """``with deploy(**settings) as deployment:`` the API and its job engine (see the module docs)."""

    @contextmanager
    def run(workers: int = 2, **overrides: str) -> Iterator[Deployment]:
        engine = ENGINE | overrides
        paid: dict[str, Any] = {
            "pay_to": chain.pay_to.address,
            "payment_networks": [PaymentNetwork(network=chain.network, asset=chain.token.address)],
            "facilitator_url": facilitator_url,
            "public_url": "https://sonde.example.org",
            "rate_limit": "1000/minute",
        }
        if engine_mode == "embedded":
            database = f"sqlite+aiosqlite:///{tmp_path / 'history.sqlite3'}"
            anyio.run(migrate.upgrade, database)
            settings = Settings.model_validate(
                engine | paid | {"redis_url": None, "embedded_jobs": True, "database_url": database}
            )
            with serve(create_app(settings), proxy_headers=False) as port:
                yield Deployment(engine_mode, f"http://127.0.0.1:{port}", database, settings)
            return
        with postgres_database() as database:
            environment = {f"MCP_SONDE_{name.upper()}": value for name, value in engine.items()}
            fleet = Fleet(tmp_path, shared_redis_url(), database, environment)
            settings = Settings.model_validate(
                engine | paid | {"redis_url": fleet.redis_url, "jobs_queue": fleet.queue,
                                 "redis_namespace": fleet.namespace, "database_url": database}
            )  # fmt: skip
            keyring_of(settings)  # (one key for the API and the workers: the data directory's)
            try:
                for _ in range(workers):
                    fleet.start("worker", "--concurrency", "4")
                fleet.start("scheduler")
                with serve(create_app(settings), proxy_headers=False) as port:
                    yield Deployment(engine_mode, f"http://127.0.0.1:{port}", database, settings, fleet)
            finally:
                codes = fleet.stop()
            assert all(code == 0 for code in codes), fleet.logs()

    return run
