"""The monitor tables (SQLAlchemy Core), beside the history's in one metadata and one database.

- ``monitors``: one row per monitor bought. ``monitor_id`` is the public id; the monitor token
  is kept only as its SHA-256 (``token_sha256``: a 256-bit random token needs no slow hash, a
  guess is as hard as the token). The webhook secret is not stored: it is derived again when a
  delivery is signed (:mod:`app.webhooks.secrets`, from the signing key ``secret_keyid``).
  ``payment`` is the SHA-256 of the payment's authorization key (network, asset, payer, nonce;
  :mod:`app.payment.gate`), unique: one payment never makes two monitors, whatever races.
  ``confirmed_status`` and ``last_status`` are what the two-in-a-row rule reads
  (:mod:`app.monitors.alerts`); ``certificate_alerted`` the certificate ``not_after`` an
  expiry alert was sent for. ``(state, next_due_at)`` is indexed for the claim of due runs.
- ``monitor_runs``: each run handed out (``run_id``, the job id and history run id, unique),
  with the status its outcome reported (``NULL`` until then): the record that makes
  :meth:`app.monitors.source.MonitorSource.finished` idempotent, and the monitor's last results.
  ``claimed_at`` is when the run was handed out. The runs without a status yet are indexed
  apart (partial index on ``claimed_at``), for the claim's
  search for runs never reported (:mod:`app.monitors.store`).
"""

from __future__ import annotations

from sqlalchemy import Boolean, Column, ForeignKey, Index, Integer, String, Table

from app.db.tables.history import Key, Moment, metadata

#: Monitor states.
ACTIVE, EXHAUSTED, DELETED = "active", "exhausted", "deleted"

monitors = Table(
    "monitors",
    metadata,
    Column("id", Key, primary_key=True, autoincrement=True),
    Column("monitor_id", String(32), nullable=False, unique=True),
    Column("url", String(2048), nullable=False),
    Column("interval_s", Integer, nullable=False),
    Column("webhook_url", String(2048), nullable=False),
    Column("token_sha256", String(64), nullable=False),
    Column("secret_keyid", String(64), nullable=False),
    Column("payment", String(64), nullable=True, unique=True),
    Column("runs_bought", Integer, nullable=False),
    Column("runs_left", Integer, nullable=False),
    Column("state", String(16), nullable=False),
    Column("next_due_at", Moment, nullable=False),
    Column("confirmed_status", String(32), nullable=True),
    Column("last_status", String(32), nullable=True),
    Column("certificate_alerted", Moment, nullable=True),
    Column("exhausted_sent", Boolean, nullable=False, default=False),
    Column("created_at", Moment, nullable=False),
    Column("deleted_at", Moment, nullable=True),
)
Index("ix_monitors_state_next_due_at", monitors.c.state, monitors.c.next_due_at)

monitor_runs = Table(
    "monitor_runs",
    metadata,
    Column("id", Key, primary_key=True, autoincrement=True),
    Column("monitor", Key, ForeignKey("monitors.id", ondelete="CASCADE"), nullable=False),
    Column("run_id", String(64), nullable=False, unique=True),
    Column("due_at", Moment, nullable=False),
    Column("claimed_at", Moment, nullable=True),
    Column("started_at", Moment, nullable=True),
    Column("finished_at", Moment, nullable=True),
    Column("status", String(32), nullable=True),
    Column("reason", String(64), nullable=True),
)
Index("ix_monitor_runs_monitor_id", monitor_runs.c.monitor, monitor_runs.c.id)
#: The runs still waiting for their outcome, by when they were handed out (the claim's search for lost runs).
Index(
    "ix_monitor_runs_unreported",
    monitor_runs.c.claimed_at,
    postgresql_where=monitor_runs.c.status.is_(None),
    sqlite_where=monitor_runs.c.status.is_(None),
)
