"""The registry mirror's tables (migration 0005), on the history store's metadata.

- ``registry_entries``: one row per ``(name, version)`` the registry listed, with its lifecycle
  ``status`` (``active``, ``deprecated``, ``deleted``), ``updated_at`` and ``latest`` (the
  registry's ``isLatest``), from ``_meta["io.modelcontextprotocol.registry/official"]``, and
  the entry's ``title`` and ``description`` (cut; migration 0007), which the directory shows.
- ``registry_endpoints``: the entry's ``remotes``: the normalised URL (without its query
  string), transport (``streamable-http``, ``sse``), ``server_id`` (as
  :func:`app.history.records.server_id_of` computes it), host, and ``skip_reason`` when it is
  kept but never probed (``url_template``, ``needs_headers``, ``query_string``,
  ``refused:<guard reason>``). ``swept`` marks the one row per ``server_id`` that the sweep
  probes (an active, latest entry's endpoint that is not skipped; the lowest id when several
  entries list one URL), recomputed after every sync. The sweep's schedule lives beside it
  (:mod:`app.sweeps.policy`): ``next_due``, ``claimed_job``/``claimed_at`` (the job handed out),
  ``finished_job`` (the last job heard of, so a redelivered outcome is applied once),
  ``last_status``, ``last_reason``, ``last_probed_at`` and ``failures`` (consecutive).
- ``registry_sync``: one row per registry URL (keyed by the SHA-256 of it): when the next sync is
  due and which job claimed it, whether a full import completed, the newest ``updatedAt`` seen
  (the next ``updated_since``), and the last sync's report.
- ``optout``: hosts and URLs that are never contacted (:mod:`app.optout`).
"""

from __future__ import annotations

from sqlalchemy import JSON, Boolean, Column, ForeignKey, Index, Integer, String, Table, UniqueConstraint

from app.db.tables.history import Key, Moment, metadata

registry_entries = Table(
    "registry_entries",
    metadata,
    Column("id", Key, primary_key=True, autoincrement=True),
    Column("name", String(200), nullable=False),
    Column("version", String(255), nullable=False),
    Column("status", String(16), nullable=False),
    Column("published_at", Moment, nullable=True),
    Column("updated_at", Moment, nullable=True),
    Column("latest", Boolean, nullable=False),
    Column("seen_at", Moment, nullable=False),
    Column("title", String(100), nullable=True),
    Column("description", String(1000), nullable=True),
    UniqueConstraint("name", "version"),
)

registry_endpoints = Table(
    "registry_endpoints",
    metadata,
    Column("id", Key, primary_key=True, autoincrement=True),
    Column("entry", Key, ForeignKey("registry_entries.id", ondelete="CASCADE"), nullable=False),
    Column("url", String(2048), nullable=False),
    Column("host", String(253), nullable=False),
    Column("transport", String(32), nullable=False),
    Column("server_id", String(24), nullable=False),
    Column("skip_reason", String(64), nullable=True),
    Column("swept", Boolean, nullable=False),
    Column("next_due", Moment, nullable=False),
    Column("claimed_job", String(64), nullable=True),
    Column("claimed_at", Moment, nullable=True),
    Column("finished_job", String(64), nullable=True),
    Column("last_status", String(32), nullable=True),
    Column("last_reason", String(64), nullable=True),
    Column("last_probed_at", Moment, nullable=True),
    Column("failures", Integer, nullable=False),
    UniqueConstraint("entry", "url"),
)
Index("ix_registry_endpoints_swept_next_due", registry_endpoints.c.swept, registry_endpoints.c.next_due)
Index("ix_registry_endpoints_server_id", registry_endpoints.c.server_id)

registry_sync = Table(
    "registry_sync",
    metadata,
    Column("registry", String(64), primary_key=True),
    Column("next_due", Moment, nullable=False),
    Column("claimed_job", String(64), nullable=True),
    Column("finished_job", String(64), nullable=True),
    Column("full_done", Boolean, nullable=False),
    Column("newest_updated_at", Moment, nullable=True),
    Column("last_sync_at", Moment, nullable=True),
    Column("last_report", JSON, nullable=True),
)

optout = Table(
    "optout",
    metadata,
    Column("id", Key, primary_key=True, autoincrement=True),
    Column("kind", String(8), nullable=False),
    Column("value", String(2048), nullable=False),
    Column("added_at", Moment, nullable=False),
    UniqueConstraint("kind", "value"),
)
