"""The history tables (SQLAlchemy Core), laid out for the reads the API makes.

- ``servers``: one row per normalised endpoint URL (without its query string: a query often
  carries an API key, and stored records never hold one). ``server_id`` is the public id, the
  first 24 hex characters of the SHA-256 of that URL, so anyone holding the URL can compute it.
- ``toolsets``: each distinct tool list once, keyed by the SHA-256 of the canonical form of its
  cleaned definitions and of its two fingerprints (``definitions_sha256``: descriptions count,
  so a description change is a new tool set, and so does what cleaning cuts, through the
  fingerprints of the list as served); the schema and toolset fingerprints beside it. Definitions are kept as
  zlib-compressed canonical JSON.
- ``runs``: one row per served full check: the facts the API filters and sorts by as columns,
  the served result (without its tool definitions, which live in ``toolsets``) and the DSSE
  envelope as compressed JSON, and three facts of the result the statistics count
  (:mod:`app.db.facts`: the handshake request that answered, whether protected resource
  metadata was found, the tool count). ``(server, observed_at, status, reason, latency_ms)`` is indexed
  for a server's history: it holds all a history read takes, so that read never visits the rows
  (each a page of its own, with the blobs beside it); ``attestation_id`` for
  ``GET /v1/attestations/{id}``; ``observed_at`` and ``toolset`` for pruning.
- ``server_days``: per server and UTC day, the runs that found it up, down, gated (``auth``,
  counted as up) or left out (our own limits, a 429), maintained as runs are stored, so 90 days
  of uptime is 90 rows read by primary key.
- ``day_digests``: per server and past UTC day, what a history read takes of that day's runs
  (their count, status changes, sorted latencies), written by the first read that needs it and
  valid while its run count equals the day's counters (:mod:`app.history.digests`): a server
  checked every 5 minutes is 90 rows to read, not 25,920 runs.
- ``changes``: each change of a server's tool set between consecutive runs, with its verdict
  and the diff, indexed by ``(server, observed_at, id)``, the order the newest are read in, and
  by run and tool sets for pruning (the foreign-key checks of a delete find the rows that point
  to it by index).
- ``baselines``: the tool set a maintainer approved for a server.

The monitor and webhook tables live beside these ones (:mod:`app.db.tables.monitors`,
:mod:`app.db.tables.webhooks`), and so does the directory's (:mod:`app.db.tables.directory`).

Integer primary keys are ``BIGINT`` on PostgreSQL and ``INTEGER`` (the rowid) on SQLite.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    SmallInteger,
    String,
    Table,
)

#: Bumped with every migration; ``serve`` refuses a database whose revision is older.
SCHEMA_REVISION = "0013"

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

Key = BigInteger().with_variant(Integer(), "sqlite")
Moment = DateTime(timezone=True)

servers = Table(
    "servers",
    metadata,
    Column("id", Key, primary_key=True, autoincrement=True),
    Column("server_id", String(24), nullable=False, unique=True),
    Column("url", String(2048), nullable=False),
    Column("host", String(253), nullable=False),
    Column("addresses", JSON, nullable=False),
    Column("first_seen", Moment, nullable=False),
    Column("last_seen", Moment, nullable=False),
    Column("latest_run", Key, nullable=True),
    Column("latest_status", String(32), nullable=True),
    Column("latest_toolset", Key, nullable=True),
)

toolsets = Table(
    "toolsets",
    metadata,
    Column("id", Key, primary_key=True, autoincrement=True),
    Column("definitions_sha256", String(64), nullable=False, unique=True),
    Column("schema_fingerprint", String(64), nullable=True, index=True),
    Column("toolset_fingerprint", String(64), nullable=True),
    Column("tool_count", Integer, nullable=False),
    Column("definitions", LargeBinary, nullable=False),
    Column("first_seen", Moment, nullable=False),
)

runs = Table(
    "runs",
    metadata,
    Column("id", Key, primary_key=True, autoincrement=True),
    Column("run_id", String(64), nullable=False, unique=True),
    Column("server", Key, ForeignKey("servers.id", ondelete="CASCADE"), nullable=False),
    Column("observed_at", Moment, nullable=False),
    Column("status", String(32), nullable=False),
    Column("reason", String(64), nullable=False),
    Column("uptime", SmallInteger, nullable=False),
    Column("protocol_version", String(64), nullable=True),
    Column("transport", String(32), nullable=True),
    Column("latency_ms", Float, nullable=True),
    Column("total_ms", Float, nullable=True),
    Column("toolset", Key, ForeignKey("toolsets.id"), nullable=True),
    Column("attestation_id", String(64), nullable=False),
    Column("result", LargeBinary, nullable=False),
    Column("envelope", LargeBinary, nullable=False),
    # (facts of the result the statistics read, :mod:`app.db.facts`; from revision 0008)
    Column("handshake", String(16), nullable=True),
    Column("metadata_published", Boolean, nullable=True),
    Column("tool_count", Integer, nullable=True),
)
# (covering: a history read is an index-only scan of the server's runs, :mod:`app.history.window`)
Index("ix_runs_server_history", runs.c.server, runs.c.observed_at, runs.c.status, runs.c.reason, runs.c.latency_ms)
Index("ix_runs_observed_at", runs.c.observed_at)
Index("ix_runs_attestation_id", runs.c.attestation_id)
Index("ix_runs_toolset", runs.c.toolset)  # (pruning: the runs that point to a tool set)

server_days = Table(
    "server_days",
    metadata,
    Column("server", Key, ForeignKey("servers.id", ondelete="CASCADE"), primary_key=True),
    Column("day", Date, primary_key=True),
    Column("up", Integer, nullable=False, default=0),
    Column("down", Integer, nullable=False, default=0),
    Column("gated", Integer, nullable=False, default=0),
    Column("left_out", Integer, nullable=False, default=0),
)

day_digests = Table(
    "day_digests",
    metadata,
    Column("server", Key, ForeignKey("servers.id", ondelete="CASCADE"), primary_key=True),
    Column("day", Date, primary_key=True),
    Column("runs", Integer, nullable=False),
    Column("digest", LargeBinary, nullable=False),
)

changes = Table(
    "changes",
    metadata,
    Column("id", Key, primary_key=True, autoincrement=True),
    Column("server", Key, ForeignKey("servers.id", ondelete="CASCADE"), nullable=False),
    Column("run", Key, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("observed_at", Moment, nullable=False),
    Column("from_toolset", Key, ForeignKey("toolsets.id"), nullable=True),
    Column("to_toolset", Key, ForeignKey("toolsets.id"), nullable=True),
    Column("verdict", String(16), nullable=False),
    Column("diff", LargeBinary, nullable=False),
)
Index("ix_changes_server_observed_at_id", changes.c.server, changes.c.observed_at, changes.c.id)
Index("ix_changes_run", changes.c.run)  # (pruning: the cascade from a run deleted)
Index("ix_changes_from_toolset", changes.c.from_toolset)
Index("ix_changes_to_toolset", changes.c.to_toolset)

baselines = Table(
    "baselines",
    metadata,
    Column("server", Key, ForeignKey("servers.id", ondelete="CASCADE"), primary_key=True),
    Column("toolset", Key, ForeignKey("toolsets.id"), nullable=False),
    Column("approved_at", Moment, nullable=False),
    Column("approved_by", String(32), nullable=False),
)
