"""The database: its tables, the engine, the migrations (Alembic) and what several stores share.

PostgreSQL, or SQLite as the embedded default. Every capability's queries live with it
(:mod:`app.history`, :mod:`app.directory`, :mod:`app.registry`, :mod:`app.monitors`,
:mod:`app.webhooks`, :mod:`app.stats`, :mod:`app.baselines`); their tables are here
(:mod:`app.db.tables`), so the migrations import nothing but this package.
"""
