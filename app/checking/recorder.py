"""Served checks into the history, never in a check's way.

A served full check (never a private one: with the caller's credentials, or of a URL with a
query string, :func:`private`) becomes a :class:`app.history.records.Run` and
is put on a bounded queue (:data:`QUEUE_RUNS`); one task per process writes the queue to the
database. The check's answer never waits for the database: while it does not answer, runs
wait in the queue (retried with backoff, 0.5 s up to 30 s) and past its bound the newest run is
dropped, counted (``mcp_sonde_history_runs_total{outcome="lost"}``) and logged once a minute.
A run the database refuses for a fault of its own (a constraint, bad data) is lost, not
retried. On stop, what is queued gets a few seconds to be written. ``/readyz`` shows the
queue and whether the database answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any
from urllib.parse import urlsplit

import anyio
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from app.checking.metrics import Metrics
from app.history.records import Run
from app.history.store import History
from app.suite.model import CheckResult

logger = logging.getLogger("mcp_sonde.history")
QUEUE_RUNS = 1000
DRAIN_ON_STOP_S = 5.0
#: Longest wait for the database's answer to ``/readyz``'s ping, seconds.
PING_S = 1.0


def private(result: CheckResult) -> bool:
    """A check the history never keeps: one with the caller's credentials, or of a URL with a
    query string. A query often carries a key (``?api_key=``, a tenant token) and then selects
    what the server shows: kept under the URL without it, such a run would publish a tenant's
    tools to anyone who knows the URL (as a baseline, a change) and let any caller write the
    public URL's uptime through a query of their own."""
    return result.credentialed or bool(urlsplit(result.url).query)


def run_of(result: CheckResult, served: bytes, attestation_id: str, envelope: bytes, run_id: str | None = None) -> Run:
    """The history's record of a served check (``served``: its answer without tool definitions);
    its run id is ``run_id`` when the caller chose one (a scheduled job's id), else the attestation's."""
    complete = result.schema_fingerprint is not None and result.tool_definitions is not None
    tools = tuple(d.model_dump(mode="json", by_alias=True) for d in result.tool_definitions or ()) if complete else None
    return Run(
        run_id=run_id or attestation_id, url=result.url, host=urlsplit(result.url).hostname or "",
        observed_at=result.checked_at, status=result.status, reason=result.reason,
        protocol_version=result.protocol_version, transport=result.transport, latency_ms=result.latency_ms,
        total_ms=result.timings.total_ms, addresses=tuple(result.addresses), tools=tools,
        schema_fingerprint=result.schema_fingerprint, toolset_fingerprint=result.toolset_fingerprint,
        result=served, attestation_id=attestation_id, envelope=envelope, credentialed=result.credentialed,
    )  # fmt: skip


#: SQLSTATEs of a transaction the database gave up for another's sake: a deadlock, a
#: serialization failure (PostgreSQL appendix A, class 40); the same write tried again succeeds.
RETRY_SQLSTATES = frozenset({"40P01", "40001"})


def transient(exc: Exception) -> bool:
    """A fault of the database's reachability or of a moment (retried), not of the run (lost)."""
    if isinstance(exc, OperationalError | OSError | TimeoutError | ConnectionError | PoolTimeout):
        return True  # (PoolTimeout: every pooled connection busy, none lent within the pool's wait)
    if not isinstance(exc, DBAPIError):
        return False
    state = getattr(exc.orig, "sqlstate", None) or getattr(exc.orig, "pgcode", None)
    return bool(exc.connection_invalidated) or state in RETRY_SQLSTATES


class Recorder:
    """The queue and its writer (see the module docs)."""

    def __init__(self, history: History, metrics: Metrics, capacity: int = QUEUE_RUNS) -> None:
        self.history = history
        self._metrics = metrics
        self._queue: asyncio.Queue[Run] = asyncio.Queue(capacity)
        self._task: asyncio.Task[None] | None = None
        self._told = 0.0
        self._writing = False
        self.answering = True

    def submit(self, run: Run) -> None:
        """Queue ``run`` (never waits; a credentialed run is refused here already)."""
        if run.credentialed:
            return
        try:
            self._queue.put_nowait(run)
        except asyncio.QueueFull:
            self._metrics.history_runs.labels(outcome="lost").inc()
            if time.monotonic() - self._told > 60:
                self._told = time.monotonic()
                logger.error("the history queue is full (%d runs): served checks are not being kept", QUEUE_RUNS)
            return
        self._metrics.history_queue.set(self._queue.qsize())
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._write())

    async def _write(self) -> None:
        pause = 0.5
        while not self._queue.empty():
            run = self._queue.get_nowait()
            self._writing = True
            waited = False
            while True:
                try:
                    stored = await self.history.record(run)
                except Exception as exc:
                    if not transient(exc):  # refused for a fault of the data: not retried
                        logger.error("the history refused a run: %s", type(exc).__name__)
                        self._metrics.history_runs.labels(outcome="lost").inc()
                        break
                    if not waited:
                        waited = True
                        self._metrics.history_runs.labels(outcome="queued").inc()
                    self._down(exc)
                    await asyncio.sleep(pause)
                    pause = min(pause * 2, 30.0)
                    continue
                self.answering, pause = True, 0.5
                self._metrics.history_runs.labels(outcome="stored" if stored else "duplicate").inc()
                break
            self._writing = False
            self._metrics.history_queue.set(self._queue.qsize())

    def _down(self, exc: BaseException) -> None:
        if self.answering:
            logger.warning("the history database does not answer (%s): runs wait in the queue", type(exc).__name__)
        self.answering = False

    async def state(self) -> dict[str, Any]:
        """For ``/readyz``: whether the database answers now (a ping bounded by :data:`PING_S`)
        and answered the writer last, and what waits (the run being written included)."""
        try:
            with anyio.fail_after(PING_S):
                answers = await self.history.ping()
        except TimeoutError:
            answers = False
        writing = self._task is not None and not self._task.done() and self._writing
        if not answers:
            self.answering = False
        elif not writing and self._queue.empty():
            self.answering = True  # (nothing waits: the ping is the latest word)
        return {"ok": answers and self.answering, "queued": self._queue.qsize() + writing}

    async def aclose(self) -> None:
        """Give the queue a few seconds to be written, then release the database."""
        if self._task is not None and not self._task.done():
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self._task), DRAIN_ON_STOP_S)
            self._task.cancel()
        await self.history.aclose()
