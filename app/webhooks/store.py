"""The webhook delivery store: deliveries to make, the claim of due attempts, the delivery log.

A delivery is added in the transaction that raised its alert (:func:`add`, called by
:mod:`app.monitors.store`), so an alert is never lost nor raised twice. :meth:`DeliveryStore.claim`
hands out due attempts once, through :func:`app.db.claim.claim_due`: each is moved ``lease_s``
into the future in the same statement that finds it still due (a compare-and-set on
``next_attempt_at``, on both backends, after a ``FOR UPDATE SKIP LOCKED`` select on
PostgreSQL), and if its worker dies the attempt is due again when the lease ends.
:meth:`DeliveryStore.record` logs an attempt and moves the delivery on in one transaction, once
per ``(delivery, attempt)``: a redelivered attempt job is logged once.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from app.db.claim import Read, claim_due
from app.db.tables.monitors import monitors
from app.db.tables.webhooks import FAILED, PENDING, webhook_attempts, webhook_deliveries
from app.history.records import utc

#: Most deliveries one page of the log holds.
LOG_PAGE = 100


def new_delivery_id() -> str:
    """A fresh ``webhook-id``."""
    return "msg_" + secrets.token_hex(16)


async def add(db: AsyncConnection, monitor: int, event: str, body: bytes, now: datetime) -> str:
    """Add a delivery of ``body`` to the monitor whose key is ``monitor``, due now; its id."""
    delivery_id = new_delivery_id()
    await db.execute(
        webhook_deliveries.insert().values(
            delivery_id=delivery_id, monitor=monitor, event=event, body=body, created_at=now, state=PENDING,
            attempts=0, next_attempt_at=now,
        )
    )  # fmt: skip
    return delivery_id


async def cancel(db: AsyncConnection, monitor: int, reason: str, now: datetime) -> None:
    """Fail the monitor's pending deliveries (its monitor was deleted), in ``db``'s transaction."""
    await db.execute(
        update(webhook_deliveries)
        .where(webhook_deliveries.c.monitor == monitor, webhook_deliveries.c.state == PENDING)
        .values(state=FAILED, next_attempt_at=None, last_reason=reason, last_attempt_at=now)
    )


@dataclass(frozen=True)
class Due:
    """An attempt handed out: the delivery, the attempt's number (from 1), when it was due."""

    delivery_id: str
    attempt: int
    due_at: datetime


@dataclass(frozen=True)
class Target:
    """What an attempt sends, and where."""

    delivery_id: str
    monitor_id: str
    webhook_url: str
    secret_keyid: str
    event: str
    body: bytes
    state: str
    attempts: int
    first_attempt_at: datetime | None


@dataclass(frozen=True)
class Attempt:
    """One logged attempt (``status_code`` of the receiver's answer, if it answered)."""

    attempt: int
    attempted_at: datetime
    status_code: int | None
    reason: str
    duration_ms: float


@dataclass(frozen=True)
class Delivery:
    """A delivery as the log shows it."""

    delivery_id: str
    event: str
    created_at: datetime
    state: str
    attempts: int
    next_attempt_at: datetime | None
    last_status: int | None
    last_reason: str | None
    log: list[Attempt]


class DeliveryStore:
    """Deliveries on the history's database (see the module docs)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def claim(self, now: datetime, limit: int, lease_s: float) -> list[Due]:
        """Hand out up to ``limit`` attempts due at ``now``, each once (see the module docs and
        :func:`app.db.claim.claim_due`)."""

        async def move(row: Read) -> dict[str, Any]:
            return dict(next_attempt_at=now + timedelta(seconds=lease_s))

        claimed: list[Due] = []
        async with self.engine.begin() as db:
            async for row, _ in claim_due(
                db, webhook_deliveries, (webhook_deliveries.c.delivery_id, webhook_deliveries.c.attempts),
                due=webhook_deliveries.c.next_attempt_at, now=now, limit=limit, move=move,
                where=(webhook_deliveries.c.state == PENDING,), still=(webhook_deliveries.c.state == PENDING,),
            ):  # fmt: skip
                claimed.append(Due(row.delivery_id, row.attempts + 1, utc(row.next_attempt_at)))
        return claimed

    async def target(self, delivery_id: str) -> Target | None:
        """The delivery ``delivery_id`` with its monitor's webhook, if it exists."""
        query = (
            select(webhook_deliveries, monitors.c.monitor_id, monitors.c.webhook_url, monitors.c.secret_keyid)
            .join(monitors, monitors.c.id == webhook_deliveries.c.monitor)
            .where(webhook_deliveries.c.delivery_id == delivery_id)
        )
        async with self.engine.connect() as db:
            row = (await db.execute(query)).first()
        if row is None:
            return None
        return Target(
            delivery_id=row.delivery_id, monitor_id=row.monitor_id, webhook_url=row.webhook_url,
            secret_keyid=row.secret_keyid, event=row.event, body=bytes(row.body), state=row.state,
            attempts=row.attempts, first_attempt_at=utc(row.first_attempt_at) if row.first_attempt_at else None,
        )  # fmt: skip

    async def record(self, delivery_id: str, attempt: Attempt, *, state: str, next_attempt_at: datetime | None) -> bool:
        """Log ``attempt`` and move the delivery to ``state`` (``next_attempt_at`` when pending);
        ``False`` when this attempt was logged already (nothing changed)."""
        try:
            async with self.engine.begin() as db:
                key = await db.scalar(
                    select(webhook_deliveries.c.id).where(webhook_deliveries.c.delivery_id == delivery_id)
                )
                if key is None:
                    return False
                await db.execute(
                    webhook_attempts.insert().values(
                        delivery=key, attempt=attempt.attempt, attempted_at=attempt.attempted_at,
                        status_code=attempt.status_code, reason=attempt.reason, duration_ms=attempt.duration_ms,
                    )
                )  # fmt: skip
                first = webhook_deliveries.c.first_attempt_at
                await db.execute(
                    update(webhook_deliveries)
                    .where(webhook_deliveries.c.id == key, webhook_deliveries.c.state == PENDING)
                    .values(
                        attempts=attempt.attempt,
                        state=state,
                        next_attempt_at=next_attempt_at,
                        first_attempt_at=func.coalesce(first, attempt.attempted_at),
                        last_attempt_at=attempt.attempted_at,
                        last_status=attempt.status_code,
                        last_reason=attempt.reason,
                    )
                )
        except IntegrityError:  # (delivery, attempt) logged already: a redelivered attempt
            return False
        return True

    async def log(self, monitor: int, limit: int = LOG_PAGE, before: str | None = None) -> list[Delivery] | None:
        """The monitor's newest ``limit`` deliveries (older than the delivery ``before``), newest
        first, each with its attempts; ``None`` when ``before`` is not one of its deliveries."""
        query = select(webhook_deliveries).where(webhook_deliveries.c.monitor == monitor)
        async with self.engine.connect() as db:
            if before is not None:
                cursor = await db.scalar(
                    select(webhook_deliveries.c.id).where(
                        webhook_deliveries.c.delivery_id == before, webhook_deliveries.c.monitor == monitor
                    )
                )
                if cursor is None:
                    return None
                query = query.where(webhook_deliveries.c.id < cursor)
            rows = (await db.execute(query.order_by(webhook_deliveries.c.id.desc()).limit(limit))).all()
            keys = [row.id for row in rows]
            tried = (
                await db.execute(
                    select(webhook_attempts)
                    .where(webhook_attempts.c.delivery.in_(keys))
                    .order_by(webhook_attempts.c.delivery, webhook_attempts.c.attempt)
                )
            ).all() if keys else []  # fmt: skip
        attempts: dict[int, list[Attempt]] = {}
        for item in tried:
            attempts.setdefault(item.delivery, []).append(
                Attempt(item.attempt, utc(item.attempted_at), item.status_code, item.reason, item.duration_ms)
            )
        return [
            Delivery(
                delivery_id=row.delivery_id,
                event=row.event,
                created_at=utc(row.created_at),
                state=row.state,
                attempts=row.attempts,
                next_attempt_at=utc(row.next_attempt_at) if row.next_attempt_at else None,
                last_status=row.last_status,
                last_reason=row.last_reason,
                log=attempts.get(row.id, []),
            )
            for row in rows
        ]
