"""The monitor :class:`~app.queue.model.Source`: due monitor runs as probe jobs, and the alerts their outcomes raise.

:meth:`MonitorSource.due` claims due runs (:meth:`app.monitors.store.MonitorStore.claim`) and
hands each out as a ``probe`` job whose id is a fresh run id (the history stores the run
under it, once). :meth:`MonitorSource.finished` reads what the history noted at that run (the
server's newest tool-list change, when its run id is the job's) and records the outcome with
its alerts (:mod:`app.monitors.alerts`) and webhook deliveries in one transaction, once per
job id: an outcome heard twice changes nothing the second time.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime

from app.history.records import Change, server_id_of
from app.history.store import History
from app.monitors import events
from app.monitors.alerts import CERTIFICATE_DAYS, Alert, Assessed, Watch, assess
from app.monitors.events import MAX_BODY_BYTES
from app.monitors.store import Monitor, MonitorStore
from app.queue.model import PROBE, Job, Outcome
from app.settings import Settings

logger = logging.getLogger("mcp_sonde.monitors")
NAME = "monitor"


def utc_now() -> datetime:
    """Now, in UTC."""
    return datetime.now(UTC)


class MonitorSource:
    """Source ``monitor`` (see the module docs).

    Args:
        store: the monitors.
        history: where the probe job stored its run (read for the run's tool-list change).
        settings: the public URL.
        clock: now (tests pass their own).
    """

    name = NAME

    def __init__(
        self, store: MonitorStore, history: History, settings: Settings, clock: Callable[[], datetime] = utc_now
    ) -> None:
        self.store = store
        self.history = history
        self.settings = settings
        self.clock = clock

    async def due(self, now: datetime, limit: int) -> list[Job]:
        """Claim up to ``limit`` due monitor runs as probe jobs."""
        claimed = await self.store.claim(now, limit)
        return [
            Job(
                kind=PROBE,
                id=run.run_id,
                source=NAME,
                ref=run.monitor_id,
                url=run.url,
                due_at=run.due_at,
                data={"last_run": run.last},
            )
            for run in claimed
        ]

    async def begin(self, job: Job) -> bool:
        """Mark the run started; ``False`` when it was given back, cancelled or its monitor deleted
        (:meth:`app.monitors.store.MonitorStore.start`)."""
        return job.source == NAME and await self.store.start(job.id, self.clock())

    async def finished(self, outcome: Outcome) -> None:
        """Record the run's outcome and raise its alerts (idempotent per job id)."""
        job = outcome.job
        if job.source != NAME:
            return
        change = await self._change(outcome)
        result = outcome.result
        not_after = outcome.certificate_not_after
        if not_after is None and result is not None and result.tls is not None:
            not_after = result.tls.not_after
        now = self.clock()
        settings = self.settings

        def decide(monitor: Monitor, watch: Watch) -> Assessed:
            return assess(watch, status=outcome.status, reason=outcome.reason, change=change, not_after=not_after,
                          now=now, certificate_days=CERTIFICATE_DAYS)  # fmt: skip

        def body_of(monitor: Monitor, alert: Alert, run_id: str | None) -> bytes:
            public, cap = settings.public_base_url, MAX_BODY_BYTES
            return events.body(alert, monitor_id=monitor.monitor_id, url=monitor.url, run_id=run_id, at=now,
                               public_url=public, max_bytes=cap)  # fmt: skip

        finished = await self.store.finish(
            job.id, status=outcome.status, reason=outcome.reason, now=now, decide=decide, body_of=body_of
        )
        if finished is not None and finished.deliveries:
            logger.info("monitor %s: %d alert(s) to deliver", finished.monitor.monitor_id, len(finished.deliveries))

    async def _change(self, outcome: Outcome) -> Change | None:
        """The tool-list change the history noted at this run, if any."""
        if not outcome.stored:
            return None
        newest = await self.history.changes(server_id_of(outcome.job.url), limit=1)
        return newest[0] if newest and newest[0].run_id == outcome.job.id else None
