"""The pruning job inside the running service: it prunes the runs past the retention after its
start, and a history database that is down leaves the service answering."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2
import pytest

from app.history import retention
from app.http import create_app
from app.settings import Settings
from tests.checking.test_recorder import stored, wait_for
from tests.history.test_store import run as sample_run
from tests.http.routes.test_changes import seed
from tests.servers.uvicorn_thread import serve


@pytest.fixture(autouse=True)
def prompt_prunes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first prune at once, then one a second (an hour and a minute in the service)."""
    monkeypatch.setattr(retention, "PRUNE_DELAY_S", 0.0)
    monkeypatch.setattr(retention, "PRUNE_INTERVAL_S", 1.0)


@contextmanager
def running(**overrides: Any) -> Iterator[tuple[str, Any]]:
    app = create_app(Settings(allow_private=True, redis_url=None, **overrides))
    with serve(app, proxy_headers=False) as port:
        yield f"http://127.0.0.1:{port}", app


def test_the_service_prunes_what_is_past_the_retention(tmp_path: Path) -> None:
    seed(tmp_path, [None, None, None])  # the schema, and three runs of 1 November 2026
    database = f"sqlite+aiosqlite:///{tmp_path / 'history.sqlite3'}"
    age = (datetime.now(UTC) - sample_run(0).observed_at).days
    assert len(stored(database)) == 3 and age >= 2
    settings = {"data_dir": tmp_path}
    with running(**settings, history_retention_days=age + 1) as (base, app):
        job = app.state.services.pruner
        assert wait_for(lambda: job.outcomes["done"] >= 1)
        assert len(stored(database)) == 3  # none is older than the retention
    with running(**settings, history_retention_days=age - 1) as (base, app):
        job = app.state.services.pruner
        assert wait_for(lambda: job.pruned == 3)  # (counted once the prune has ended)
        assert stored(database) == [] and job.outcomes["failed"] == 0
        assert httpx2.get(f"{base}/v1/servers/{'0' * 24}/changes", timeout=10).status_code == 404


def test_a_history_database_that_is_down_leaves_the_service_answering() -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    down = f"postgresql+asyncpg://postgres@127.0.0.1:{port}/none"
    with running(database_url=down) as (base, app):
        job = app.state.services.pruner
        assert wait_for(lambda: job.outcomes["failed"] >= 2, within_s=15)  # the first, and the next turn
        health = httpx2.get(f"{base}/healthz", timeout=10)
        diff = httpx2.post(f"{base}/v1/mcp/diff", json={"before": [], "after": []}, timeout=10)
        assert job._task is not None and not job._task.done()
    assert health.status_code == 200 and diff.status_code == 200
    assert job._task is None  # stopped with the service
