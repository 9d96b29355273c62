"""The webhook :class:`~app.queue.model.Source`: due delivery attempts as ``webhook`` jobs.

A job's id is ``<delivery id>.<attempt number>``: the same attempt handed out twice (a lease
that ended under a slow worker) is one job to the engine, and a redelivered job is logged
once (:meth:`app.webhooks.store.DeliveryStore.record`). A claimed attempt is leased for the
attempt's budget and a minute more; a worker that dies leaves it due again after that.
Webhook jobs are not probes: :meth:`WebhookSource.finished` is never called with an outcome
of its own and ignores any.
"""

from __future__ import annotations

from datetime import datetime

from app.queue.model import WEBHOOK, Job, Outcome
from app.settings import Settings
from app.webhooks.store import DeliveryStore

NAME = "webhook"
LEASE_MARGIN_S = 60.0


def job_id(delivery_id: str, attempt: int) -> str:
    """The job id of an attempt."""
    return f"{delivery_id}.{attempt}"


def parse_job_id(value: str) -> tuple[str, int] | None:
    """``(delivery id, attempt)`` of a job id, or ``None`` when it is not one."""
    delivery_id, _, attempt = value.rpartition(".")
    if not delivery_id or not attempt.isdigit() or not 0 < int(attempt) < 1000:
        return None
    return delivery_id, int(attempt)


class WebhookSource:
    """Source ``webhook`` (see the module docs)."""

    name = NAME

    def __init__(self, store: DeliveryStore, settings: Settings) -> None:
        self.store = store
        self.lease_s = settings.webhook_timeout_s + LEASE_MARGIN_S

    async def due(self, now: datetime, limit: int) -> list[Job]:
        """Claim up to ``limit`` due attempts as webhook jobs."""
        claimed = await self.store.claim(now, limit, self.lease_s)
        return [
            Job(
                kind=WEBHOOK,
                id=job_id(due.delivery_id, due.attempt),
                source=NAME,
                ref=due.delivery_id,
                due_at=due.due_at,
                data={"attempt": due.attempt},
            )
            for due in claimed
        ]

    async def finished(self, outcome: Outcome) -> None:
        """Nothing to hear: a delivery's handler records its own attempts."""
        return None
