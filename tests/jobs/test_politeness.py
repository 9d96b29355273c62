"""Per-host politeness across three worker processes, measured at the fixture server."""

from __future__ import annotations

import asyncio
from pathlib import Path

from app.attest.keyring import keyring_of
from app.queue.broker import stream_broker
from app.queue.dispatch import kick
from tests.jobs.conftest import job_settings, postgres_database, probe_job, stored_runs
from tests.jobs.fleet import Counted, Fleet, wait_for
from tests.servers.raw import RawServer
from tests.servers.redis_server import shared_redis_url

JOBS = 8


def test_three_workers_keep_two_probes_at_once_and_one_start_a_second_per_host(raw: RawServer, tmp_path: Path) -> None:
    counted = Counted(hold_s=2.5)  # (longer than the start interval: a third probe would overlap)
    for n in range(JOBS):
        raw.routes[f"/mcp{n}"] = counted  # (one path per job: checks of one URL at once share a probe)
    with postgres_database() as database:
        fleet = Fleet(tmp_path, shared_redis_url(), database)
        settings = job_settings(database, redis_url=fleet.redis_url, jobs_queue=fleet.queue,
                                redis_namespace=fleet.namespace)  # fmt: skip
        keyring_of(settings)  # (the signing key made once, before the workers share it)
        jobs = [probe_job(raw.url(f"/mcp{n}")) for n in range(JOBS)]

        async def enqueue() -> None:
            broker = stream_broker(settings)
            for job in jobs:
                await kick(broker, job)
            await broker.shutdown()

        try:
            for _ in range(3):
                fleet.start("worker", "--concurrency", "4")
            asyncio.run(enqueue())
            took = wait_for(lambda: asyncio.run(stored_runs(database)) == JOBS, 90, "every job's run stored")
        finally:
            codes = fleet.stop()
        assert codes == [0, 0, 0], fleet.logs()
        print(f"\n{JOBS} probes of one host by 3 workers in {took:.1f} s; most at once {counted.most['127.0.0.1']}, "
              f"least gap between starts {counted.least_gap('127.0.0.1'):.2f} s")  # fmt: skip
        assert len(counted.starts["127.0.0.1"]) == JOBS and len(counted.paths) == JOBS
        assert counted.most["127.0.0.1"] == 2  # (the limit reached, never passed)
        assert counted.least_gap("127.0.0.1") >= 0.9
