"""Monitor and webhook tests on both backends (the history's fixtures: SQLite, and PostgreSQL
in a database of its own per test), with real check results of a real MCP server on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest

from app.attest.keyring import KeyRing, open_keyring
from app.checking.recorder import run_of
from app.checking.services import open_history
from app.history.records import Run
from app.history.store import SqlHistory
from app.monitors.store import Monitor, MonitorStore, new_monitor_id
from app.monitors.tokens import new_token, token_digest
from app.queue.model import Job, Outcome
from app.settings import Settings
from app.suite.full import full_check
from app.suite.model import CheckResult
from app.webhooks.secrets import WebhookSecrets
from tests.history.conftest import database_url, history, pytest_generate_tests
from tests.servers.sdk_apps import build_app
from tests.servers.uvicorn_thread import serve

__all__ = ["database_url", "history", "pytest_generate_tests"]

T0 = datetime(2027, 1, 10, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="session")
def checked() -> Iterator[CheckResult]:
    """A real full check of a real MCP server (the ``mcp`` SDK, stateless JSON) on loopback."""
    settings = Settings(allow_private=True, probe_timeout_s=8.0, step_timeout_s=3.0, session_end_timeout_s=1.0)
    with serve(build_app()) as port:
        url = f"http://127.0.0.1:{port}/stateless-json/mcp"
        result = anyio.run(lambda: full_check(url, settings=settings, include_tools=True))
    assert result.status == "ok" and result.tool_definitions, result.reason
    yield result


@pytest.fixture
def ring(tmp_path: Path) -> KeyRing:
    """A key ring of its own (a key generated into the test's directory)."""
    return open_keyring(tmp_path / "keys" / "keys.json")


@pytest.fixture
def secrets(ring: KeyRing) -> WebhookSecrets:
    return WebhookSecrets(ring)


async def make_monitor(
    store: MonitorStore,
    secrets: WebhookSecrets,
    url: str,
    *,
    webhook: str = "http://127.0.0.1:9/hook",
    runs: int = 3,
    interval_s: int = 300,
    now: datetime = T0,
    payment: str | None = None,
) -> tuple[Monitor, str]:
    """A monitor in the store, and its token."""
    monitor_id, token = new_monitor_id(), new_token()
    keyid, _ = secrets.new(monitor_id, datetime.now(UTC))
    made = await store.create(
        monitor_id=monitor_id, url=url, interval_s=interval_s, webhook_url=webhook, token_sha256=token_digest(token),
        secret_keyid=keyid, payment=payment, runs=runs, now=now,
    )  # fmt: skip
    return made, token


def outcome(job: Job, result: CheckResult, status: str | None = None, **changes: object) -> Outcome:
    """The outcome of ``job`` from a real check result (``status``: the status class it reports)."""
    return Outcome(job=job, status=status or result.status, reason=result.reason if status in (None, "ok") else "x",
                   stored=bool(changes.pop("stored", False)), result=result, **changes)  # type: ignore[arg-type]  # fmt: skip


def stored_run(result: CheckResult, run_id: str, observed_at: datetime, *, drop_tools: int = 0) -> Run:
    """The history's record of ``result`` as run ``run_id`` (``drop_tools``: with its last tools left out)."""
    made = run_of(result, b"{}", run_id, b"{}")
    tools = made.tools
    assert tools is not None
    if drop_tools:
        tools = tools[:-drop_tools]
        made = replace(made, schema_fingerprint="a" * 64, toolset_fingerprint="b" * 64)
    return replace(made, run_id=run_id, observed_at=observed_at, tools=tools, url=result.url)


def later(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


async def history_of(url: str) -> SqlHistory:
    return open_history(url)
