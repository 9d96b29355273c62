"""The tables, one module per capability, all on one metadata (:mod:`app.db.tables.history`)."""
