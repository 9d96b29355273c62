"""Fault drills of the job engine with real processes: a worker killed mid-probe, Redis
restarted under load, the database cut, the active scheduler killed.

Each drill prints its figures. Marked ``soak`` (tens of seconds each): ``scripts/test -m soak``
runs them, as ``.ci/run`` does.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import redis

from app.attest.keyring import keyring_of
from app.queue.broker import stream_broker
from app.queue.dispatch import kick
from app.queue.model import Job
from app.settings import Settings
from tests.history.conftest import relayed_postgres
from tests.jobs.conftest import job_settings, postgres_database, probe_job, runs_by_id, stored_runs
from tests.jobs.fleet import Counted, Fleet, wait_for
from tests.servers.raw import RawServer
from tests.servers.redis_server import OwnRedis, shared_redis_url

pytestmark = [pytest.mark.soak, pytest.mark.timeout(900)]  # (a drill on a loaded machine takes minutes)
FAST = {"MCP_SONDE_JOB_REDELIVERY_IDLE_S": "5", "MCP_SONDE_HOST_START_INTERVAL_S": "0",
        "MCP_SONDE_HOST_CONCURRENCY": "100", "MCP_SONDE_JOB_HISTORY_WAIT_S": "2",
        "MCP_SONDE_JOB_TURN_WAIT_S": "5"}  # fmt: skip


def settings_of(fleet: Fleet) -> Settings:
    return job_settings(fleet.database_url, redis_url=fleet.redis_url, jobs_queue=fleet.queue,
                        redis_namespace=fleet.namespace)  # fmt: skip


def enqueue(settings: Settings, jobs: list[Job]) -> None:
    async def run() -> None:
        broker = stream_broker(settings)
        for job in jobs:
            await kick(broker, job)
        await broker.shutdown()

    asyncio.run(run())


def routes(raw: RawServer, counted: Counted, n: int) -> list[str]:
    """``n`` paths on ``raw``, all served by ``counted`` (one URL per job: no shared probes)."""
    for i in range(n):
        raw.routes[f"/mcp{i}"] = counted
    return [raw.url(f"/mcp{i}") for i in range(n)]


def test_a_worker_killed_mid_probe_leaves_its_job_to_another_which_stores_it_once(
    raw: RawServer, tmp_path: Path
) -> None:
    counted = Counted(hold_s=3.0)
    [url] = routes(raw, counted, 1)
    with postgres_database() as database:
        fleet = Fleet(tmp_path, shared_redis_url(), database, FAST)
        settings = settings_of(fleet)
        keyring_of(settings)
        job = probe_job(url)
        try:
            first = fleet.start("worker")
            enqueue(settings, [job])
            wait_for(lambda: len(counted.starts["127.0.0.1"]) == 1, 120, "the first worker's probe")
            fleet.kill(first)  # mid-probe: the server holds its initialize
            killed = time.monotonic()
            fleet.start("worker")
            wait_for(lambda: asyncio.run(stored_runs(database, job.id)) == 1, 60, "the run stored")
            took = time.monotonic() - killed
            time.sleep(1)
        finally:
            codes = fleet.stop()
        probes, copies = len(counted.starts["127.0.0.1"]), runs_by_id(database)[job.id]
        print(f"\nworker SIGKILLed mid-probe: redelivered and stored {took:.1f} s later; "
              f"probes at the server {probes}, runs stored {copies}")  # fmt: skip
        assert codes[0] == -9 and codes[1] == 0, fleet.logs()
        assert len(counted.starts["127.0.0.1"]) == 2 and runs_by_id(database) == Counter({job.id: 1})
        # The redelivery takes over its dead delivery's single-flight lock and host slots (they
        # would hold it for probe_timeout_s + job_turn_wait_s + 5 = 18 s more): the run is stored
        # about job_redelivery_idle_s (5 s) + the probe's 3 s after the kill.
        assert took < 15, took


def test_redis_restarted_under_load_loses_and_duplicates_no_run(raw: RawServer, tmp_path: Path) -> None:
    jobs_n = 30
    counted = Counted(hold_s=0.5)
    urls = routes(raw, counted, jobs_n)
    own = OwnRedis(tmp_path, appendonly=True)  # (as a queue's Redis is run: compose.yaml)
    own.start()
    try:
        with postgres_database() as database:
            fleet = Fleet(tmp_path, own.url, database, FAST)
            settings = settings_of(fleet)
            keyring_of(settings)
            jobs = [probe_job(url) for url in urls]
            try:
                fleet.start("worker", "--concurrency", "3")
                fleet.start("worker", "--concurrency", "3")
                enqueue(settings, jobs)
                wait_for(lambda: asyncio.run(stored_runs(database)) >= 5, 60, "runs under way")
                own.stop()
                down_at = asyncio.run(stored_runs(database))
                time.sleep(3)
                own.start()
                took = wait_for(lambda: asyncio.run(stored_runs(database)) == jobs_n, 90, "every run stored")
                time.sleep(6)  # (past the redelivery time: a job redelivered now would show)
            finally:
                codes = fleet.stop()
            stored = runs_by_id(database)
            print(f"\nRedis restarted (down 3 s) with {down_at}/{jobs_n} runs stored: all {len(stored)} stored "
                  f"{took:.1f} s after it came back, most copies of one run {max(stored.values())}, "
                  f"probes at the server {sum(counted.paths.values())}")  # fmt: skip
            assert codes == [0, 0], fleet.logs()
            assert stored == Counter({job.id: 1 for job in jobs})
    finally:
        own.stop()


def test_a_database_cut_off_makes_runs_wait_and_no_worker_fails(raw: RawServer, tmp_path: Path) -> None:
    jobs_n = 6
    counted = Counted(hold_s=0.2)
    urls = routes(raw, counted, jobs_n)
    with relayed_postgres() as (relay, database):
        fleet = Fleet(tmp_path, shared_redis_url(), database, FAST)
        settings = settings_of(fleet)
        keyring_of(settings)
        jobs = [probe_job(url) for url in urls]
        try:
            fleet.start("worker", "--concurrency", "3")
            time.sleep(2)
            relay.cut()
            enqueue(settings, jobs)
            wait_for(lambda: sum(counted.paths.values()) == jobs_n, 60, "every job probed while the database is down")
            time.sleep(3)  # (past job_history_wait_s: the runs wait in the history queue)
            assert all(process.poll() is None for process in fleet.processes), fleet.logs()
            relay.open = True
            took = wait_for(lambda: asyncio.run(stored_runs(database)) == jobs_n, 60, "the waiting runs written")
        finally:
            codes = fleet.stop()
        print(f"\ndatabase cut while {jobs_n} jobs ran: no worker failed; the runs were written {took:.1f} s after "
              "it came back")  # fmt: skip
        assert codes == [0], fleet.logs()
        assert runs_by_id(database) == Counter({job.id: 1 for job in jobs})
        assert "does not answer" in fleet.logs()


def test_the_standby_scheduler_takes_over_within_30_s_and_nothing_is_scheduled_twice(tmp_path: Path) -> None:
    counter = f"drill-counter:{uuid.uuid4().hex}"
    extra = {"MCP_SONDE_JOB_PARTS": json.dumps(["tests.jobs.drill_source:register"]), "DRILL_COUNTER": counter,
             "MCP_SONDE_SCHEDULER_TICK_S": "1", "DRILL_JOBS_PER_TICK": "2"}  # fmt: skip
    with postgres_database() as database:
        fleet = Fleet(tmp_path, shared_redis_url(), database, extra)
        keyring_of(settings_of(fleet))
        client = redis.Redis.from_url(fleet.redis_url)

        def enqueued() -> list[str]:
            entries: Any = client.xrange(fleet.queue)
            return [json.loads(json.loads(fields[b"data"])["args"][0])["id"] for _, fields in entries]

        try:
            active = fleet.start("scheduler")
            wait_for(lambda: len(enqueued()) >= 4, 120, "the first scheduler enqueueing")
            standby = fleet.start("scheduler")
            time.sleep(4)
            fleet.kill(active)
            before = len(enqueued())
            took = wait_for(lambda: len(enqueued()) > before + 2, 40, "the standby enqueueing")
            time.sleep(3)
            ids = Counter(enqueued())
        finally:
            codes = fleet.stop()
            client.delete(fleet.queue, counter)
            client.close()
        print(f"\nactive scheduler SIGKILLed: the standby enqueued {took:.1f} s later; {len(ids)} jobs enqueued, "
              f"most copies of one {max(ids.values())}")  # fmt: skip
        assert took < 30 and codes[1] == 0 and standby.returncode == 0, fleet.logs()
        assert max(ids.values()) == 1 and set(ids) == {f"drill-{n}" for n in range(1, len(ids) + 1)}
