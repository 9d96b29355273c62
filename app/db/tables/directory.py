"""The directory's table (migration 0007): one denormalised row per stored server.

``directory`` holds what a directory read filters, sorts and shows, so a search is one indexed
query of one table, never a join over runs, tool sets and the registry mirror:

- from the latest run (:meth:`app.history.store.SqlHistory.record` keeps it current):
  ``status``, ``reason``, ``protocol_version``, ``transport``, ``auth`` (``gated`` when the
  latest status is ``auth``, ``open`` when it is ``ok``, else unknown), ``last_checked``, the
  30-day uptime rate ``uptime_30d`` (``-1`` while unknown, so the sort key is never NULL), and
  ``last_changed`` (the newest tool-list change);
- from the latest complete tool list: ``toolset_digest`` (its ``definitions_sha256``),
  ``tool_count``, ``tool_names`` (newline-joined, capped) and ``tool_category``, the category
  rule of the check suite over those names (:mod:`app.suite.category`); ``category`` is the
  one shown and filtered on: ``tool_category`` unless :data:`app.directory.rows.TEMPLATE_SERVERS`
  or more servers list that very tool set (a gateway or a template says nothing of what one
  server does);
- from the registry mirror (:func:`app.directory.rows.refresh_registry`, at every import of
  an entry that lists the server): ``registry_entry``, ``name``, ``title``, ``description``;
- who speaks for the server (migration 0011, :mod:`app.directory.identity`): ``named_by``
  (``owner`` when a verified owner of the host set the title and description, ``registry``
  when one publisher's entry gave them, none otherwise), ``publishers`` (how many registry
  publishers list the endpoint with a remote that was probed; with more than one, no entry's
  name is shown as the row's) and ``claimed_at`` (the host's last successful claim check);
- ``sort_name`` (the registry name, else the host, lower-cased) and ``search_text``: the
  lower-cased URL, name, title, description and tool names, matched with ``LIKE '%word%'``.

Indexes: ``(sort_key, server_id)`` for each sort (keyset pages walk them), the filters beside
the name order, ``toolset_digest`` for the per-tool-set count, and on PostgreSQL a GIN trigram
index on ``search_text`` (``pg_trgm``, which answers ``LIKE '%word%'`` from the index). SQLite
scans ``search_text`` (an embedded directory is small); the SQL is the same on both.
"""

from __future__ import annotations

from sqlalchemy import Column, Float, ForeignKey, Index, Integer, String, Table, Text

from app.db.tables.history import Key, Moment, metadata

directory = Table(
    "directory",
    metadata,
    Column("server", Key, ForeignKey("servers.id", ondelete="CASCADE"), primary_key=True),
    Column("server_id", String(24), nullable=False, unique=True),
    Column("url", String(2048), nullable=False),
    Column("host", String(253), nullable=False),
    Column("status", String(32), nullable=True),
    Column("reason", String(64), nullable=True),
    Column("protocol_version", String(64), nullable=True),
    Column("transport", String(32), nullable=True),
    Column("auth", String(8), nullable=True),
    Column("last_checked", Moment, nullable=False),
    Column("last_changed", Moment, nullable=True),
    Column("uptime_30d", Float, nullable=False),
    Column("latest_attestation", String(64), nullable=True),
    Column("toolset_digest", String(64), nullable=True),
    Column("tool_count", Integer, nullable=True),
    Column("tool_names", Text, nullable=True),
    Column("tool_category", String(32), nullable=True),
    Column("category", String(32), nullable=True),
    Column("registry_entry", Key, nullable=True),
    Column("name", String(200), nullable=True),
    Column("title", String(100), nullable=True),
    Column("description", String(1000), nullable=True),
    Column("named_by", String(16), nullable=True),
    Column("server_title", String(128), nullable=True),  # (serverInfo's title, else name: migration 0013)
    Column("publishers", Integer, nullable=False, server_default="0"),
    Column("claimed_at", Moment, nullable=True),
    Column("sort_name", String(253), nullable=False),
    Column("search_text", Text, nullable=False),
)
Index("ix_directory_sort_name_server_id", directory.c.sort_name, directory.c.server_id)
Index("ix_directory_last_checked_server_id", directory.c.last_checked, directory.c.server_id)
Index("ix_directory_uptime_30d_server_id", directory.c.uptime_30d, directory.c.server_id)
Index("ix_directory_status_sort_name", directory.c.status, directory.c.sort_name, directory.c.server_id)
Index("ix_directory_category_sort_name", directory.c.category, directory.c.sort_name, directory.c.server_id)
Index("ix_directory_toolset_digest", directory.c.toolset_digest)
Index("ix_directory_registry_entry", directory.c.registry_entry)
#: The PostgreSQL trigram index (made by migration 0007 only where ``pg_trgm`` could be created).
TRIGRAM_INDEX = "ix_directory_search_text_trgm"
