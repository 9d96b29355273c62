"""The webhook delivery tables (SQLAlchemy Core), beside the monitors'.

- ``webhook_deliveries``: one row per event to deliver. ``delivery_id`` is the Standard
  Webhooks ``webhook-id`` (the same on every attempt, so a receiver drops a repeat); ``body``
  the exact bytes signed and sent. ``state`` is ``pending`` (``next_attempt_at`` says when),
  ``delivered`` or ``failed``; ``last_status`` and ``last_reason`` say how the last attempt
  ended (never the receiver's body). ``(state, next_attempt_at)`` is indexed for the claim of
  due attempts, ``(monitor, id)`` for a monitor's delivery log, newest first.
- ``webhook_attempts``: each attempt, unique per ``(delivery, attempt)``, so an attempt
  redelivered to a second worker is logged once.
"""

from __future__ import annotations

from sqlalchemy import Column, Float, ForeignKey, Index, Integer, LargeBinary, String, Table, UniqueConstraint

from app.db.tables import monitors as _monitors  # noqa: F401  (the table the foreign key names)
from app.db.tables.history import Key, Moment, metadata

#: Delivery states.
PENDING, DELIVERED, FAILED = "pending", "delivered", "failed"

webhook_deliveries = Table(
    "webhook_deliveries",
    metadata,
    Column("id", Key, primary_key=True, autoincrement=True),
    Column("delivery_id", String(40), nullable=False, unique=True),
    Column("monitor", Key, ForeignKey("monitors.id", ondelete="CASCADE"), nullable=False),
    Column("event", String(64), nullable=False),
    Column("body", LargeBinary, nullable=False),
    Column("created_at", Moment, nullable=False),
    Column("state", String(16), nullable=False),
    Column("attempts", Integer, nullable=False, default=0),
    Column("next_attempt_at", Moment, nullable=True),
    Column("first_attempt_at", Moment, nullable=True),
    Column("last_attempt_at", Moment, nullable=True),
    Column("last_status", Integer, nullable=True),
    Column("last_reason", String(64), nullable=True),
)
Index("ix_webhook_deliveries_state_next_attempt_at", webhook_deliveries.c.state, webhook_deliveries.c.next_attempt_at)
Index("ix_webhook_deliveries_monitor_id", webhook_deliveries.c.monitor, webhook_deliveries.c.id)

webhook_attempts = Table(
    "webhook_attempts",
    metadata,
    Column("id", Key, primary_key=True, autoincrement=True),
    Column("delivery", Key, ForeignKey("webhook_deliveries.id", ondelete="CASCADE"), nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("attempted_at", Moment, nullable=False),
    Column("status_code", Integer, nullable=True),
    Column("reason", String(64), nullable=False),
    Column("duration_ms", Float, nullable=False),
    UniqueConstraint("delivery", "attempt"),
)
