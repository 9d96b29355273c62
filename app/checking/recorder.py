"""Served checks into the history, never in a check's way.

A served full check (never a private one: with the caller's credentials, or of a URL with a
query string, :func:`private`) becomes a :class:`app.history.records.Run`, written to this
process's outbox (:mod:`app.checking.outbox`) before the answer leaves; one task per process
writes the outbox to the database. The check's answer never waits for the database: while it
does not answer, runs wait in the outbox on disk (retried with backoff, 0.5 s up to 30 s), and
they survive a stop or a crash of the process: the next start, or any process of the same data
directory that finds the file orphaned (at its start and every :data:`ADOPT_EVERY_S`), writes
them. A run the database refuses for a fault of its own (a constraint, bad data) is dropped,
not retried. On a graceful stop the writer gets :data:`DRAIN_ON_STOP_S` to empty the outbox,
and what is left stays in the file for the next start. A check asks :meth:`Recorder.has_room`
before it is charged or served: with the outbox full (:data:`app.checking.outbox.MAX_RUNS`) or
its file failing, it is refused (503 ``history_unavailable``, nothing charged) rather than
served and not kept. Counted in
``mcp_sonde_history_runs_total{outcome}`` (``queued``: kept in the outbox; ``stored``;
``duplicate``; ``retried``: a write the database did not answer, tried again; ``dropped``);
``mcp_sonde_history_queue`` is what waits. ``/readyz`` shows it and whether the database answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from app.background import stop_all
from app.checking import outbox
from app.checking.metrics import Metrics
from app.history.records import Run
from app.history.store import History
from app.suite.model import CheckResult

logger = logging.getLogger("mcp_sonde.history")
DRAIN_ON_STOP_S = 5.0
#: How often orphaned outbox files (of processes gone) are looked for, seconds.
ADOPT_EVERY_S = 30.0
#: Runs read from the outbox at a time.
BATCH = 100
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
#: SQLSTATEs of a server that is stopping, starting or restarting (PostgreSQL appendix A, class 57:
#: admin_shutdown, crash_shutdown, cannot_connect_now, "the database system is shutting down"):
#: the database does not answer for now, as a refused connection; the run is not at fault.
UNAVAILABLE_SQLSTATES = frozenset({"57P01", "57P02", "57P03"})


def transient(exc: Exception) -> bool:
    """A fault of the database's reachability or of a moment (retried), not of the run (lost)."""
    if isinstance(exc, OperationalError | OSError | TimeoutError | ConnectionError | PoolTimeout):
        return True  # (PoolTimeout: every pooled connection busy, none lent within the pool's wait)
    if not isinstance(exc, DBAPIError):
        return False
    state = getattr(exc.orig, "sqlstate", None) or getattr(exc.orig, "pgcode", None)
    if isinstance(state, str) and state.startswith("08"):  # (class 08: a connection exception)
        return True
    return bool(exc.connection_invalidated) or state in RETRY_SQLSTATES | UNAVAILABLE_SQLSTATES


class Recorder:
    """The outbox and its writer (see the module docs).

    Args:
        history: the store runs are written to.
        metrics: where runs are counted.
        directory: the outbox directory (``<data_dir>/outbox``).
    """

    def __init__(self, history: History, metrics: Metrics, directory: Path) -> None:
        self.history = history
        self.directory = directory
        self._metrics = metrics
        self._own: outbox.OutboxFile | None = None
        self._task: asyncio.Task[None] | None = None
        self._adopter: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()  # (set while this process's outbox is empty)
        self._told = 0.0
        self._writing = False
        self._closing = False
        self.answering = True

    @property
    def own(self) -> outbox.OutboxFile:
        """This process's outbox file (made on first use).

        Raises:
            OSError: the data directory cannot be written.
        """
        if self._own is None:
            self._own = outbox.create(self.directory)
        return self._own

    def start(self) -> None:
        """Start the writer and the adopter of orphaned files (within a running loop)."""
        self._ensure_writer()
        if self._adopter is None:
            self._adopter = asyncio.get_running_loop().create_task(self._adopt_forever())

    def has_room(self) -> bool:
        """Whether :meth:`submit` can keep a run now: the outbox opens and is not full. A check
        asks before it is charged or served, so a run that could not be kept is never served."""
        try:
            return self.own.size < outbox.MAX_RUNS
        except (OSError, sqlite3.Error) as exc:
            self._dropped(f"the outbox cannot be opened ({type(exc).__name__})", count=False)
            return False

    def submit(self, run: Run) -> bool:
        """Keep ``run`` in the outbox, durably, and wake the writer; ``False`` when it was not kept
        (a credentialed run, refused here already; the outbox full or its disk failing)."""
        if run.credentialed:
            return False
        try:
            kept = self.own.put(run)
        except (OSError, sqlite3.Error) as exc:
            self._dropped(f"the outbox cannot be written ({type(exc).__name__})")
            return False
        if not kept:
            self._dropped(f"the outbox is full ({outbox.MAX_RUNS} runs)")
            return False
        self._metrics.history_runs.labels(outcome="queued").inc()
        self._metrics.history_queue.set(self.own.size)
        self._idle.clear()
        self._ensure_writer()
        self._wake.set()
        return True

    def _dropped(self, why: str, count: bool = True) -> None:
        if count:
            self._metrics.history_runs.labels(outcome="dropped").inc()
        if time.monotonic() - self._told > 60:
            self._told = time.monotonic()
            logger.error("%s: served checks are not being kept", why)

    def _ensure_writer(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._write_forever())

    async def _write_forever(self) -> None:
        while not self._closing:
            await self._drain(self.own)
            if self._closing:
                return
            self._wake.clear()
            if self.own.size == 0:
                self._idle.set()
                await self._wake.wait()

    async def _drain(self, file: outbox.OutboxFile) -> None:
        """Write ``file``'s runs to the history until it is empty (or the recorder closes)."""
        pause = 0.5
        while file.size > 0 and not self._closing:
            for run in file.pending(BATCH):
                self._writing = True
                while True:
                    try:
                        stored = await self.history.record(run)
                    except Exception as exc:
                        if not transient(exc):  # refused for a fault of the data: not retried
                            logger.error("the history refused a run: %s", type(exc).__name__)
                            self._metrics.history_runs.labels(outcome="dropped").inc()
                            break
                        self._metrics.history_runs.labels(outcome="retried").inc()
                        self._down(exc)
                        self._writing = False
                        await asyncio.sleep(pause)
                        if self._closing:
                            return
                        pause = min(pause * 2, 30.0)
                        self._writing = True
                        continue
                    self.answering, pause = True, 0.5
                    self._metrics.history_runs.labels(outcome="stored" if stored else "duplicate").inc()
                    break
                file.done(run.run_id)
                self._writing = False
                if file is self._own:
                    self._metrics.history_queue.set(file.size)
                if self._closing:
                    return

    async def _adopt_forever(self) -> None:
        while not self._closing:
            try:
                await self.adopt()
            except Exception as exc:  # (a disk fault): tried again at the next turn
                logger.warning("orphaned outbox files not adopted: %s", type(exc).__name__)
            await asyncio.sleep(ADOPT_EVERY_S)

    async def adopt(self) -> int:
        """Drain every orphaned outbox file of the data directory into the history, then delete
        it; how many were adopted (a file left unfinished by a stop is left for the next one)."""
        adopted = 0
        own = self._own.path if self._own is not None else None
        for file in outbox.orphans(self.directory, own):
            adopted += 1
            left = file.size
            if left:
                logger.info("adopting an outbox of a process gone: %d runs", left)
            await self._drain(file)
            file.close(remove=file.size == 0)
        return adopted

    def _down(self, exc: BaseException) -> None:
        if self.answering:
            logger.warning("the history database does not answer (%s): runs wait in the outbox", type(exc).__name__)
        self.answering = False

    async def state(self) -> dict[str, Any]:
        """For ``/readyz``: whether the database answers now (a ping bounded by :data:`PING_S`)
        and answered the writer last, and what waits (the run being written included)."""
        try:
            with anyio.fail_after(PING_S):
                answers = await self.history.ping()
        except TimeoutError:
            answers = False
        queued = self._own.size if self._own is not None else 0
        if not answers:
            self.answering = False
        elif not self._writing and queued == 0:
            self.answering = True  # (nothing waits: the ping is the latest word)
        return {"ok": answers and self.answering, "queued": queued}

    async def aclose(self) -> None:
        """Give the writer :data:`DRAIN_ON_STOP_S` to empty the outbox, then stop it; what is left
        stays on disk for the next start. Release the database."""
        if self._task is not None and not self._task.done() and self._own is not None and self._own.size:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(self._idle.wait(), DRAIN_ON_STOP_S)
        self._closing = True
        self._wake.set()
        await stop_all([task for task in (self._task, self._adopter) if task is not None])
        if self._own is not None:
            self._own.close(remove=self._own.size == 0)
            self._own = None
        await self.history.aclose()
