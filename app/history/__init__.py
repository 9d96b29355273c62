"""History: every served full check kept in a relational database (PostgreSQL, or SQLite as the
embedded default), with tool sets stored once, daily uptime and tool-list changes.

- :mod:`app.db.tables.history`: the tables and indexes (SQLAlchemy Core);
- :mod:`app.db.engine`: the database URL, engines and their per-backend set-up;
- :mod:`app.db.migrate`: Alembic migrations (``mcp-sonde db upgrade``) and the schema check
  ``serve`` runs at start;
- :mod:`app.history.store`: the small async interface the service uses, and its SQL implementation.
"""
