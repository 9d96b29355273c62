"""The directory of stored servers: search by text and facts, sorted, in keyset pages.

:mod:`app.db.tables.directory` is its table (one denormalised row per server), kept current by
:mod:`app.directory.rows`; :mod:`app.directory.query` reads and validates a search's parameters,
:mod:`app.directory.cursor` signs and checks page cursors, :mod:`app.directory.search` runs it.
"""
