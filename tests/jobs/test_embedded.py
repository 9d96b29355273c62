"""The embedded mode: without Redis, the app's lifespan runs the scheduler and a worker itself;
``mcp-sonde worker`` and ``scheduler`` refuse to start without Redis."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import httpx2

from app.db import migrate
from app.http import create_app
from tests.jobs import embedded_part
from tests.jobs.conftest import job_settings, probe_job, stored_runs
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp
from tests.servers.sonde import finish, launch
from tests.servers.uvicorn_thread import serve


def test_serve_without_redis_runs_due_jobs_in_its_own_process(raw: RawServer, tmp_path: Path) -> None:
    raw.routes["/mcp"] = MiniMcp()
    database = f"sqlite+aiosqlite:///{tmp_path / 'history.sqlite3'}"
    anyio.run(migrate.upgrade, database)
    job = probe_job(raw.url("/mcp"), source="embedded")
    embedded_part.JOBS[:] = [job]
    settings = job_settings(database, embedded_jobs=True, scheduler_tick_s=0.2,
                            job_parts=["tests.jobs.embedded_part:register"])  # fmt: skip
    with serve(create_app(settings), proxy_headers=False) as port:
        deadline = time.monotonic() + 30
        while not embedded_part.SOURCE.outcomes:
            assert time.monotonic() < deadline, "the embedded worker did not run the job"
            time.sleep(0.05)
        metrics = httpx2.get(f"http://127.0.0.1:{port}/metrics").text
    [outcome] = embedded_part.SOURCE.outcomes
    assert (outcome.job, outcome.status, outcome.stored) == (job, "ok", True)
    assert anyio.run(stored_runs, database, job.id) == 1
    assert 'mcp_sonde_jobs_total{kind="probe",outcome="done"} 1.0' in metrics
    assert 'mcp_sonde_jobs_enqueued_total{source="embedded"} 1.0' in metrics


def test_worker_and_scheduler_need_redis() -> None:
    for command in ("worker", "scheduler"):
        code, _out, err = finish(launch(command, env={"MCP_SONDE_LOG_FORMAT": "plain"}), timeout=60)
        lines = [line for line in err.decode().splitlines() if line.strip()]
        assert code == 20, err
        assert len(lines) == 1 and f"mcp-sonde {command} needs REDIS_URL" in lines[0]


def test_worker_refuses_an_invalid_concurrency() -> None:
    code, _out, err = finish(launch("worker", "--concurrency", "0", env={"REDIS_URL": "redis://127.0.0.1:1/0"}))
    assert code == 20 and b"worker_concurrency" in err
