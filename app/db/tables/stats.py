"""The statistics' table (SQLAlchemy Core), beside the history's in one metadata and one database.

``stats_snapshots``: one row per named snapshot (``"directory"``): the statistics last computed
(``body``, zlib-compressed JSON), when (``computed_at``), and when a process last claimed its
recomputation (``claimed_at``), so that of many processes one recomputes at a time
(:mod:`app.stats.snapshot`).
"""

from __future__ import annotations

from sqlalchemy import Column, LargeBinary, String, Table

from app.db.tables.history import Moment, metadata

stats_snapshots = Table(
    "stats_snapshots",
    metadata,
    Column("name", String(16), primary_key=True),
    Column("computed_at", Moment, nullable=True),
    Column("claimed_at", Moment, nullable=True),
    Column("body", LargeBinary, nullable=True),
)
