"""A probe job's run into the history, written by the job itself.

A served check's run goes through the recorder's queue (:mod:`app.checking.recorder`): the
answer never waits for the database. A job has no caller waiting, and its redelivery must find
its run stored, so it writes the run itself and waits for the database: while the database
does not answer (a reachability fault, :func:`app.checking.recorder.transient`), it tries again
with backoff (0.25 s up to 5 s) for ``job_history_wait_s``; then the run goes to the
recorder's bounded queue, where it waits (``mcp_sonde_history_runs_total{outcome="queued"}``)
or, when the queue is full, is counted lost (``outcome="lost"``). A worker never fails for a
database that is down. A run the database refuses for a fault of the run itself is lost at once.
The other database reads and writes of a job (the opt-out list, the source's bookkeeping) wait
the same way (:func:`patiently`): a pool whose connections are all busy for a moment, or a
database that blinks, delays a job instead of failing it. The report of a job's outcome to its
source, once the target was contacted, waits far longer (:data:`REPORT_WAIT_S`): a run has the
queue to wait in, the outcome has nowhere else, and a monitor run performed but never reported
ends ``lost`` (charged, its alerts never raised).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

from app.checking.recorder import transient
from app.history.records import Run
from app.jobs.context import JobContext

logger = logging.getLogger("mcp_sonde.jobs")
T = TypeVar("T")
#: Longest one write may take before it counts as the database not answering, seconds.
WRITE_S = 10.0
#: How long the report of an outcome waits for the database, seconds (a failover, a restart).
REPORT_WAIT_S = 300.0


async def keep(ctx: JobContext, run: Run) -> bool:
    """Write ``run`` (see the module docs); ``True`` when it is in the history now (stored by this
    call or an earlier delivery of the job), ``False`` when it waits in the queue or was lost."""
    counted = ctx.metrics.history_runs
    try:
        stored = await patiently(ctx, f"job {run.run_id}", lambda: ctx.history.record(run))
    except Exception as exc:
        if transient(exc):  # (the database did not answer within job_history_wait_s)
            ctx.services.recorder.submit(run)  # (waits there, or is counted lost when the queue is full)
            return False
        cause = getattr(exc, "orig", None)
        logger.error("the history refused the run of job %s: %s%s", run.run_id, type(exc).__name__,
                     f" ({type(cause).__name__})" if cause is not None else "")  # fmt: skip
        counted.labels(outcome="lost").inc()
        return False
    counted.labels(outcome="stored" if stored else "duplicate").inc()
    return True


async def patiently(ctx: JobContext, what: str, call: Callable[[], Awaitable[T]], wait_s: float | None = None) -> T:
    """``await call()``, tried again with backoff (0.25 s up to 5 s) while the database does not
    answer (:func:`app.checking.recorder.transient`), for ``wait_s`` (``job_history_wait_s``
    when not given) at most; each try bounded to :data:`WRITE_S`.

    Raises:
        Exception: a fault of the call itself at once, the last reachability fault once the time is up.
    """
    deadline = time.monotonic() + (ctx.settings.job_history_wait_s if wait_s is None else wait_s)
    pause = 0.25
    told = False
    while True:
        try:
            with anyio.fail_after(WRITE_S):
                return await call()
        except Exception as exc:
            if not transient(exc) or time.monotonic() + pause > deadline:
                raise
            if not told:
                told = True
                logger.warning("the history database does not answer (%s): %s waits", type(exc).__name__, what)
            await asyncio.sleep(pause)
            pause = min(pause * 2, 5.0)
