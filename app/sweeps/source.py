"""The ``sweep`` source: probe jobs for the registry mirror's swept endpoints when they are due.

:meth:`SweepSource.due` claims, in one transaction, up to ``limit`` endpoints that are swept
(:func:`app.registry.importer.refresh_swept`: an active, latest entry's endpoint, not skipped,
one per ``server_id``) and due, oldest due first, through :func:`app.db.claim.claim_due`:
rows another scheduler holds locked are skipped (PostgreSQL ``FOR UPDATE SKIP LOCKED``), and
each claim is an ``UPDATE`` that only holds while the row's due time is still the one read
(SQLite reads outside the writer's lock), so two schedulers never both hand one endpoint out.
Each claim gives the job a fresh id (the run id in the history), and moves the endpoint's due
time on by the least interval (6 h), so a standby scheduler never hands it out again before the
outcome is heard, and it is never probed twice in 6 hours even when the outcome is lost. An
endpoint on the opt-out list (:mod:`app.optout`) is never handed out: it is marked
``skipped``/``opted_out`` and put off to the longest interval (the claim passes it over). One
whose host's verified owner paused sweeps (:mod:`app.claims`, ``owner_hosts``) is marked
``skipped``/``sweeps_paused`` and put off by the least interval, so a resume takes effect
within 6 hours.

:meth:`SweepSource.finished` records the outcome (status, reason, consecutive failures) and the
next due time (:func:`app.sweeps.policy.next_due`), once per job id: an outcome heard twice, or
one of a job the endpoint no longer waits for (it was claimed again since), changes nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.claim import Read, claim_due
from app.db.tables.owners import owner_hosts
from app.db.tables.registry import registry_endpoints
from app.optout import OptOutList, matches
from app.queue.model import PROBE, Job, Outcome
from app.sweeps.policy import SweepPolicy, next_due, next_failures

SOURCE = "sweep"


class SweepSource:
    """See the module docs; ``name`` is ``"sweep"``."""

    name = SOURCE

    def __init__(self, engine: AsyncEngine, policy: SweepPolicy, clock: Callable[[], datetime] | None = None) -> None:
        self.engine = engine
        self.policy = policy
        self.clock = clock or (lambda: datetime.now(UTC))
        self.optouts = OptOutList(engine)

    async def due(self, now: datetime, limit: int) -> list[Job]:
        """Claim and return up to ``limit`` probe jobs due at ``now`` (see the module docs and
        :func:`app.db.claim.claim_due`)."""
        table = registry_endpoints
        listed = await self.optouts.items()
        hold = now + timedelta(seconds=self.policy.min_interval_s)
        jobs: list[Job] = []
        async with self.engine.begin() as db:
            paused = set((await db.execute(select(owner_hosts.c.host).where(owner_hosts.c.sweeps_paused))).scalars())

            async def move(row: Read) -> dict[str, Any] | None:
                if paused and (urlsplit(row.url).hostname or "") in paused:
                    await db.execute(
                        update(table).where(table.c.id == row.id)
                        .values(next_due=hold, last_status="skipped", last_reason="sweeps_paused")
                    )  # fmt: skip
                    return None
                if matches(row.url, listed):  # never handed out: skipped, and put off to the longest interval
                    await db.execute(
                        update(table).where(table.c.id == row.id)
                        .values(next_due=now + timedelta(seconds=self.policy.max_interval_s),
                                last_status="skipped", last_reason="opted_out")
                    )  # fmt: skip
                    return None
                return dict(next_due=hold, claimed_job=uuid.uuid4().hex, claimed_at=now)

            async for (key, url, due_at), moved in claim_due(
                db, table, (table.c.url,), due=table.c.next_due, now=now, limit=limit, move=move, where=(table.c.swept,)
            ):
                moment = due_at if due_at.tzinfo is not None else due_at.replace(tzinfo=UTC)
                jobs.append(
                    Job(kind=PROBE, id=moved["claimed_job"], source=SOURCE, ref=str(key), url=url, due_at=moment)
                )
        return jobs

    async def finished(self, outcome: Outcome) -> None:
        """Record what the probe found and when the endpoint is next due (idempotent on job id)."""
        table = registry_endpoints
        job = outcome.job
        try:
            key = int(job.ref)
        except ValueError:
            return
        now = self.clock()
        async with self.engine.begin() as db:
            query = select(table.c.claimed_job, table.c.claimed_at, table.c.finished_job, table.c.failures).where(
                table.c.id == key
            )
            if self.engine.dialect.name == "postgresql":
                query = query.with_for_update()
            row = (await db.execute(query)).one_or_none()
            if row is None or row.finished_job == job.id or row.claimed_job != job.id:
                return
            failures = next_failures(row.failures, outcome.status, outcome.reason)
            due = next_due(now, outcome.status, outcome.reason, failures, job.id, self.policy)
            if row.claimed_at is not None:
                claimed = row.claimed_at if row.claimed_at.tzinfo else row.claimed_at.replace(tzinfo=UTC)
                due = max(due, claimed + timedelta(seconds=self.policy.min_interval_s))
            await db.execute(
                update(table).where(table.c.id == key)
                .values(finished_job=job.id, last_status=outcome.status, last_reason=outcome.reason,
                        last_probed_at=now, failures=failures, next_due=due)
            )  # fmt: skip
