"""The monitor store: monitors bought, the claim of due runs, and what a finished run changes.

- :meth:`MonitorStore.create` writes a monitor in one transaction that commits only once its
  payment settled (``confirm`` runs inside it, as a paid baseline's does): a settlement refused
  or of unknown outcome leaves no monitor. The payment's key is unique: the same payment never
  makes a second monitor, even when two copies race past the payment gate.
- :meth:`MonitorStore.claim` hands out due runs once, through :func:`app.db.claim.claim_due`
  (``SELECT ... FOR UPDATE SKIP LOCKED`` on PostgreSQL, a compare-and-set on ``next_due_at``
  on both backends: a row another claim moved or holds is skipped; see there why), and the run
  is counted against the block in that same compare-and-set statement:
  ``next_due_at`` advances by ``interval_s`` (from now, when the monitor fell behind by more
  than that), ``runs_left`` drops by one, and the block's last run leaves it ``exhausted``. Each
  run handed out gets a fresh run id (the job's id, the history's run id) recorded in
  ``monitor_runs``.
- :meth:`MonitorStore.finish` records a run's outcome once (the ``monitor_runs`` row is
  updated only while it has no status yet), and in the same transaction applies the alert
  rules (:mod:`app.monitors.alerts`) and adds a webhook delivery per alert
  (:func:`app.webhooks.store.add`), so an outcome heard twice raises nothing twice. A run
  that contacted nothing (``skipped``: the opt-out list said no, or could not be read) is
  not charged: its run goes back to the block (an ``exhausted`` monitor whose last run was
  skipped is active again, and no ``monitor.exhausted`` alert is raised for it).
- A run handed out whose outcome is never heard (its handler raised and was acknowledged, the
  scheduler died before enqueueing it, the queue lost it) is not charged either: each claim
  also marks the runs *handed out* (``claimed_at``, not their due time: a monitor that fell
  behind is handed out late) more than ``lost_after_s`` ago with no outcome ``lost`` (reason
  ``never_reported``) and gives them back to their blocks, as a skipped run is, in a
  transaction of its own after the claim's: a give-back that fails is logged and tried at the
  next claim, and never costs the batch just claimed. An outcome heard after that changes
  nothing (the run has its status): at worst a run is free. A block given back is active again
  and its ``monitor.exhausted`` alert armed again (it is sent when the block runs out anew).
- A run's probe job calls :meth:`MonitorStore.start` before it contacts the target: it marks
  the run started, only while the run has no outcome and its monitor is not deleted, and the
  job contacts nothing when it did not (a late job for a run given back, or of a deleted
  monitor, is dropped). The lost-run search gives back only runs never started (a started run
  not heard of is marked ``lost`` and stays charged: it may have contacted the target), and
  deleting a monitor cancels its runs not started (``skipped``, reason ``monitor_deleted``);
  both are conditional updates of the one row, so a run is either performed and charged or not
  performed and refunded, never both.
- A token is checked against its digest in constant time; an unknown monitor costs the same
  comparison (:meth:`MonitorStore.get`), so the answer does not tell ids from tokens.
"""

from __future__ import annotations

import logging
import secrets
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Row, Select, Update, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from app.db.claim import Read, claim_due
from app.db.tables.monitors import ACTIVE, DELETED, EXHAUSTED, monitor_runs, monitors
from app.errors import SondeError
from app.history.records import utc
from app.monitors.alerts import EXHAUSTED as EXHAUSTED_EVENT
from app.monitors.alerts import NOT_A_STATUS, Alert, Assessed, Watch
from app.monitors.tokens import token_digest, token_matches
from app.webhooks import store as deliveries

logger = logging.getLogger("mcp_sonde.monitors")
#: Runs of a monitor its view lists.
RECENT_RUNS = 10
#: The status and reason of a run whose outcome was never heard.
LOST, NEVER_REPORTED = "lost", "never_reported"
#: The status and reason of a run its monitor's deletion cancelled before it started.
SKIPPED, MONITOR_DELETED = "skipped", "monitor_deleted"
_NO_TOKEN = token_digest("")


class PaymentSpent(SondeError):
    """This payment already made a monitor (``payment_already_used``)."""

    def __init__(self) -> None:
        super().__init__("payment_already_used", "this payment has already bought a monitor")


def new_monitor_id() -> str:
    """A fresh public monitor id."""
    return "mon_" + secrets.token_hex(12)


@dataclass(frozen=True)
class Monitor:
    """A monitor as stored (never its token or secret)."""

    key: int
    monitor_id: str
    url: str
    interval_s: int
    webhook_url: str
    secret_keyid: str
    runs_bought: int
    runs_left: int
    state: str
    next_due_at: datetime
    confirmed_status: str | None
    last_status: str | None
    created_at: datetime
    deleted_at: datetime | None


@dataclass(frozen=True)
class MonitorRun:
    """A run handed out, and its outcome once heard."""

    run_id: str
    due_at: datetime
    finished_at: datetime | None
    status: str | None
    reason: str | None


@dataclass(frozen=True)
class Claimed:
    """A run claimed for a monitor."""

    monitor_id: str
    url: str
    run_id: str
    due_at: datetime
    last: bool


@dataclass(frozen=True)
class Finished:
    """A run's outcome as recorded: the monitor, and the deliveries its alerts made."""

    monitor: Monitor
    deliveries: list[str]


#: Builds the body of an alert's delivery: (monitor, alert, run id) -> bytes.
BodyOf = Callable[[Monitor, Alert, str | None], bytes]
#: Applies the rules to a monitor's watch: (monitor, watch) -> what the run changes.
Decide = Callable[[Monitor, Watch], Assessed]


def _monitor(r: Row[Any]) -> Monitor:
    return Monitor(
        key=r.id, monitor_id=r.monitor_id, url=r.url, interval_s=r.interval_s, webhook_url=r.webhook_url,
        secret_keyid=r.secret_keyid, runs_bought=r.runs_bought, runs_left=r.runs_left, state=r.state,
        next_due_at=utc(r.next_due_at), confirmed_status=r.confirmed_status, last_status=r.last_status,
        created_at=utc(r.created_at), deleted_at=utc(r.deleted_at) if r.deleted_at else None,
    )  # fmt: skip


class MonitorStore:
    """Monitors on the history's database (see the module docs)."""

    def __init__(self, engine: AsyncEngine, lost_after_s: float = 3600.0) -> None:
        self.engine = engine
        self.lost_after_s = lost_after_s

    async def create(
        self,
        *,
        monitor_id: str,
        url: str,
        interval_s: int,
        webhook_url: str,
        token_sha256: str,
        secret_keyid: str,
        payment: str | None,
        runs: int,
        now: datetime,
        confirm: Callable[[Monitor], Awaitable[None]] | None = None,
    ) -> Monitor:
        """Write a monitor, first due now; ``confirm`` runs before the commit (raising: nothing written).

        Raises:
            PaymentSpent: ``payment`` made a monitor already.
        """
        values = dict(
            monitor_id=monitor_id, url=url, interval_s=interval_s, webhook_url=webhook_url, token_sha256=token_sha256,
            secret_keyid=secret_keyid, payment=payment, runs_bought=runs, runs_left=runs, state=ACTIVE,
            next_due_at=now, exhausted_sent=False, created_at=now,
        )  # fmt: skip
        try:
            async with self.engine.begin() as db:
                if payment is not None and await db.scalar(select(monitors.c.id).where(monitors.c.payment == payment)):
                    raise PaymentSpent()
                await db.execute(monitors.insert().values(values))
                row = (await db.execute(select(monitors).where(monitors.c.monitor_id == monitor_id))).one()
                made = _monitor(row)
                if confirm is not None:
                    await confirm(made)
        except IntegrityError as exc:
            raise PaymentSpent() from exc
        return made

    async def get(self, monitor_id: str, token: str) -> Monitor | None:
        """The monitor, when ``token`` is its token; ``None`` for an unknown id or a wrong token alike."""
        async with self.engine.connect() as db:
            row = (await db.execute(select(monitors).where(monitors.c.monitor_id == monitor_id))).first()
        if row is None:
            token_matches(token, _NO_TOKEN)  # (the same work as for a known id)
            return None
        return _monitor(row) if token_matches(token, row.token_sha256) else None

    async def delete(self, monitor_id: str, token: str, now: datetime) -> Monitor | None:
        """Stop the monitor (``deleted``: no more runs, its pending deliveries failed); ``None`` as for :meth:`get`."""
        found = await self.get(monitor_id, token)
        if found is None:
            return None
        async with self.engine.begin() as db:
            await db.execute(
                update(monitors)
                .where(monitors.c.id == found.key, monitors.c.state != DELETED)
                .values(state=DELETED, deleted_at=now)
            )
            await deliveries.cancel(db, found.key, "monitor_deleted", now)
            await db.execute(
                update(monitor_runs)
                .where(monitor_runs.c.monitor == found.key, monitor_runs.c.status.is_(None),
                       monitor_runs.c.started_at.is_(None))
                .values(status=SKIPPED, reason=MONITOR_DELETED, finished_at=now)
            )  # fmt: skip
            row = (await db.execute(select(monitors).where(monitors.c.id == found.key))).one()
        return _monitor(row)

    async def start(self, run_id: str, now: datetime) -> bool:
        """Mark the run ``run_id`` started; ``False`` when it must not run (it has an outcome:
        given back, cancelled or done; its monitor is deleted; or it is unknown). A run started
        already (its job delivered again) may run again."""
        live = select(monitors.c.id).where(monitors.c.state != DELETED)
        async with self.engine.begin() as db:
            marked = await db.execute(
                update(monitor_runs)
                .where(monitor_runs.c.run_id == run_id, monitor_runs.c.status.is_(None),
                       monitor_runs.c.monitor.in_(live.scalar_subquery()))
                .values(started_at=func.coalesce(monitor_runs.c.started_at, now))
            )  # fmt: skip
        return bool(marked.rowcount == 1)

    async def runs(self, monitor: int, limit: int = RECENT_RUNS) -> list[MonitorRun]:
        """The monitor's newest ``limit`` runs, newest first."""
        query = (
            select(monitor_runs)
            .where(monitor_runs.c.monitor == monitor)
            .order_by(monitor_runs.c.id.desc())
            .limit(limit)
        )
        async with self.engine.connect() as db:
            rows = (await db.execute(query)).all()
        return [
            MonitorRun(
                row.run_id, utc(row.due_at), utc(row.finished_at) if row.finished_at else None, row.status, row.reason
            )
            for row in rows
        ]

    async def claim(self, now: datetime, limit: int) -> list[Claimed]:
        """Hand out up to ``limit`` runs due at ``now``, each once (see the module docs and
        :func:`app.db.claim.claim_due`)."""

        async def move(row: Read) -> dict[str, Any]:
            following = utc(row.next_due_at) + timedelta(seconds=row.interval_s)
            if following <= now:  # fell behind (no scheduler for a while): from now on
                following = now + timedelta(seconds=row.interval_s)
            left = max(row.runs_left - 1, 0)
            return dict(next_due_at=following, runs_left=left, state=ACTIVE if left > 0 else EXHAUSTED)

        claimed: list[Claimed] = []
        async with self.engine.begin() as db:
            async for row, moved in claim_due(
                db, monitors, (monitors.c.monitor_id, monitors.c.url, monitors.c.interval_s, monitors.c.runs_left),
                due=monitors.c.next_due_at, now=now, limit=limit, move=move,
                where=(monitors.c.state == ACTIVE,), still=(monitors.c.state == ACTIVE,),
            ):  # fmt: skip
                due = utc(row.next_due_at)
                run_id = secrets.token_hex(32)
                await db.execute(
                    monitor_runs.insert().values(monitor=row.id, run_id=run_id, due_at=due, claimed_at=now)
                )
                claimed.append(Claimed(row.monitor_id, row.url, run_id, due, last=moved["runs_left"] == 0))
        try:
            async with self.engine.begin() as db:
                await self._give_back_lost(db, now)
        except Exception as exc:  # (a locked or deadlocked database): the next claim tries again
            logger.warning("lost monitor runs not given back yet: %s", type(exc).__name__)
        return claimed

    async def _give_back_lost(self, db: AsyncConnection, now: datetime) -> None:
        """Mark the runs never heard of ``lost`` and give each back to its block (see the module docs;
        rows an outcome is being written to are skipped, never waited for)."""
        lost = (
            select(monitor_runs.c.id, monitor_runs.c.monitor)
            .where(monitor_runs.c.status.is_(None),
                   monitor_runs.c.claimed_at < now - timedelta(seconds=self.lost_after_s))
            .order_by(monitor_runs.c.claimed_at)
            .limit(1000)
        )  # fmt: skip
        if db.dialect.name == "postgresql":
            lost = lost.with_for_update(skip_locked=True)
        given: Counter[int] = Counter()
        for run in (await db.execute(lost)).all():
            unstarted = await db.execute(
                update(monitor_runs)
                .where(monitor_runs.c.id == run.id, monitor_runs.c.status.is_(None),
                       monitor_runs.c.started_at.is_(None))
                .values(status=LOST, reason=NEVER_REPORTED, finished_at=now)
            )  # fmt: skip
            given[run.monitor] += unstarted.rowcount
            if not unstarted.rowcount:  # started: it may have contacted the target, so it stays charged
                await db.execute(
                    update(monitor_runs)
                    .where(monitor_runs.c.id == run.id, monitor_runs.c.status.is_(None))
                    .values(status=LOST, reason=NEVER_REPORTED, finished_at=now)
                )
        for monitor in sorted(given):  # (one order of monitor rows for every writer: no deadlock between two)
            if given[monitor]:
                await db.execute(_given_back(monitor, given[monitor]))

    async def finish(
        self, run_id: str, *, status: str, reason: str, now: datetime, decide: Decide, body_of: BodyOf
    ) -> Finished | None:
        """Record the outcome of the run ``run_id`` and deliver its alerts, once (see the module
        docs); ``None`` when the run is unknown or its outcome was recorded already."""
        async with self.engine.begin() as db:
            key = await db.scalar(select(monitor_runs.c.monitor).where(monitor_runs.c.run_id == run_id))
            if key is None:
                return None
            marked = await db.execute(
                update(monitor_runs)
                .where(monitor_runs.c.run_id == run_id, monitor_runs.c.status.is_(None))
                .values(status=status, reason=reason[:64], finished_at=now)
            )
            if marked.rowcount != 1:
                return None
            row = (await db.execute(_locked(db, select(monitors).where(monitors.c.id == key)))).one()
            monitor = _monitor(row)
            if monitor.state == DELETED:
                return Finished(monitor, [])
            if status in NOT_A_STATUS:  # nothing contacted: the run goes back to the block
                await db.execute(_given_back(key, 1))
                row = (await db.execute(select(monitors).where(monitors.c.id == key))).one()
                monitor = _monitor(row)
            watch = Watch(
                row.confirmed_status, row.last_status, utc(row.certificate_alerted) if row.certificate_alerted else None
            )
            assessed = decide(monitor, watch)
            alerts = list(assessed.alerts)
            exhausted = monitor.state == EXHAUSTED and not row.exhausted_sent
            if exhausted:
                alerts.append(Alert(EXHAUSTED_EVENT, {"runs_bought": monitor.runs_bought}))
            await db.execute(
                update(monitors)
                .where(monitors.c.id == key)
                .values(
                    confirmed_status=assessed.watch.confirmed_status,
                    last_status=assessed.watch.last_status,
                    certificate_alerted=assessed.watch.certificate_alerted,
                    exhausted_sent=row.exhausted_sent or exhausted,
                )
            )
            made = [
                await deliveries.add(db, key, alert.event, body_of(monitor, alert, run_id), now) for alert in alerts
            ]
        return Finished(monitor, made)


def _given_back(monitor: int, runs: int) -> Update:
    """``runs`` runs back to the block of ``monitor`` (not a deleted one): active again, and its
    exhausted alert armed again when it had gone out."""
    return (
        update(monitors)
        .where(monitors.c.id == monitor, monitors.c.state != DELETED)
        .values(runs_left=monitors.c.runs_left + runs, state=ACTIVE, exhausted_sent=False)
    )


def _locked(db: AsyncConnection, query: Select[Any]) -> Select[Any]:
    """``query`` locking its row on PostgreSQL (the outcomes of one monitor apply one at a time)."""
    return query.with_for_update() if db.dialect.name == "postgresql" else query
