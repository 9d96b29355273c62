"""The directory as the service reads it: one object over the history database's engine.

Searches and listings are :mod:`app.directory.search`'s queries; the rows they read are kept
current inside each run's transaction (:func:`app.directory.rows.refresh`, an ``on_record`` hook
of :class:`app.history.store.SqlHistory`) and by registry imports.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

from app.directory import search as queries
from app.directory.cursor import DEFAULT_KEY
from app.directory.query import Search


class Directory:
    """Directory reads (see the module docs)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def search(self, search: Search, key: bytes = DEFAULT_KEY) -> queries.Page:
        """One page of ``search`` (its cursor signed with ``key``)."""
        return await queries.search_page(self.engine, search, key)

    async def listing(self, server_id: str) -> queries.Found | None:
        """The server's directory row and registry entry, if it is listed."""
        return await queries.listing(self.engine, server_id)
