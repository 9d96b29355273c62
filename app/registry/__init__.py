"""The official MCP registry mirrored: its v0.1 API read page by page, within bounds, into the
database, where the sweep (:mod:`app.sweeps`) finds the remote endpoints to probe.

- :mod:`app.registry.page`: one page's JSON read into entries (garbage counted, never raised).
- :mod:`app.registry.remotes`: what of a ``remote`` may be probed, and why not (skip reasons).
- :mod:`app.registry.client`: one page fetched through the target guard, pinned and capped.
- :mod:`app.registry.importer`: entries written to the tables (:mod:`app.db.tables.registry`).
- :mod:`app.registry.sync`: a whole sync, bounded in pages, bytes and time.
- :mod:`app.registry.jobs`: the ``registry`` :class:`app.queue.model.Source` and the handler.
"""
