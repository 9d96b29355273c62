"""Directory reads: a search's page (one query of ``directory``) and one server's listing.

A page is read as ``limit + 1`` rows in the sort's order after the cursor's position (keyset
pagination: ``(sort key, server_id)`` strictly after the last row, compared as a row value, so a
page costs the same however deep it is and rows stored meanwhile never repeat or vanish from
the pages after); the extra row only says whether there is a next page. Text words are
``LIKE '%word%'`` on ``search_text`` (``\\`` escapes ``%`` and ``_`` in a word); on PostgreSQL
the trigram index answers them (:mod:`app.db.tables.directory`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, select, tuple_
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.tables.directory import directory
from app.directory import cursor as cursors
from app.directory.identity import best_by_publisher, probed_entries
from app.directory.namespaces import Verification, verification
from app.directory.query import Search
from app.history.records import utc

_SORT_COLUMNS = {"name": directory.c.sort_name, "last_checked": directory.c.last_checked,
                 "uptime": directory.c.uptime_30d}  # fmt: skip
_ASCENDING = {"name": True, "last_checked": False, "uptime": False}


@dataclass(frozen=True)
class Listing:
    """One directory row, as read."""

    server_id: str
    url: str
    host: str
    name: str | None
    title: str | None
    description: str | None
    status: str | None
    reason: str | None
    protocol_version: str | None
    transport: str | None
    auth: str | None
    last_checked: datetime
    last_changed: datetime | None
    uptime_30d: float | None
    tool_count: int | None
    category: str | None
    latest_attestation: str | None
    sort_key: str | float | datetime
    named_by: str | None = None
    publishers: int = 0
    claimed_at: datetime | None = None
    server_title: str | None = None  # (the server's own serverInfo title or name)


@dataclass(frozen=True)
class Page:
    """A page of a search and the cursor of the next (``None``: the last page)."""

    listings: list[Listing]
    next_cursor: str | None


@dataclass(frozen=True)
class RegistryEntry:
    """A registry entry that lists the server with a remote that was probed, with its publisher
    (the namespace) and how the registry verified it; ``named`` when it is the one that names
    the row (:mod:`app.directory.identity`)."""

    name: str
    version: str
    status: str
    title: str | None
    description: str | None
    latest: bool
    publisher: str
    verification: Verification
    named: bool


@dataclass(frozen=True)
class Found:
    """A server's directory row and the registry entries that list it, one per publisher."""

    listing: Listing
    entries: list[RegistryEntry]


def _escaped(word: str) -> str:
    return word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _conditions(search: Search, now: datetime) -> list[ColumnElement[bool]]:
    d = directory.c
    out: list[ColumnElement[bool]] = [d.search_text.like(f"%{_escaped(word)}%", escape="\\") for word in search.words]
    for column, value in ((d.category, search.category), (d.status, search.status),
                          (d.protocol_version, search.protocol_version), (d.transport, search.transport),
                          (d.auth, search.auth)):  # fmt: skip
        if value is not None:
            out.append(column == value)
    if search.changed_within_days is not None:
        out.append(d.last_changed >= now - timedelta(days=search.changed_within_days))
    return out


def page_query(search: Search, now: datetime) -> Select[Any]:
    """The SQL of a search's page (``limit + 1`` rows)."""
    column = _SORT_COLUMNS[search.sort]
    ascending = _ASCENDING[search.sort]
    conditions = _conditions(search, now)
    if search.after is not None:
        mark = tuple_(column, directory.c.server_id)
        after = tuple_(search.after.key, search.after.server_id)
        conditions.append(mark > after if ascending else mark < after)
    order = [column.asc(), directory.c.server_id.asc()] if ascending else [column.desc(), directory.c.server_id.desc()]
    return select(directory).where(and_(True, *conditions)).order_by(*order).limit(search.limit + 1)


def listing_of(row: Any, sort: str = "name") -> Listing:
    """A row of ``directory`` as a :class:`Listing`."""
    last_checked = utc(row.last_checked)
    key: str | float | datetime = {"name": row.sort_name, "last_checked": last_checked, "uptime": row.uptime_30d}[sort]
    return Listing(
        server_id=row.server_id, url=row.url, host=row.host, name=row.name, title=row.title,
        description=row.description, status=row.status, reason=row.reason, protocol_version=row.protocol_version,
        transport=row.transport, auth=row.auth, last_checked=last_checked,
        last_changed=utc(row.last_changed) if row.last_changed is not None else None,
        uptime_30d=None if row.uptime_30d < 0 else float(row.uptime_30d), tool_count=row.tool_count,
        category=row.category, latest_attestation=row.latest_attestation, sort_key=key, named_by=row.named_by,
        server_title=row.server_title,
        publishers=int(row.publishers or 0), claimed_at=utc(row.claimed_at) if row.claimed_at is not None else None,
    )  # fmt: skip


async def search_page(engine: AsyncEngine, search: Search, key: bytes = cursors.DEFAULT_KEY) -> Page:
    """A page of ``search`` (see the module docs)."""
    async with engine.connect() as db:
        rows = (await db.execute(page_query(search, datetime.now(UTC)))).all()
    listings = [listing_of(row, search.sort) for row in rows[: search.limit]]
    if len(rows) <= search.limit:
        return Page(listings, None)
    last = listings[-1]
    position = cursors.Position(last.sort_key, last.server_id)
    return Page(listings, cursors.encode(position, search.sort, search.digest(), key))


async def listing(engine: AsyncEngine, server_id: str) -> Found | None:
    """The server's directory row and the registry entries that list it (``None``: no such row)."""
    async with engine.connect() as db:
        row = (await db.execute(select(directory).where(directory.c.server_id == server_id))).first()
        if row is None:
            return None
        entries = (await db.execute(probed_entries(server_id))).all()
    shown = best_by_publisher(entries)
    listed = [
        RegistryEntry(entry.name, entry.version, entry.status, entry.title, entry.description, bool(entry.latest),
                      publisher, verification(entry.name, row.host), entry.id == row.registry_entry)
        for publisher, entry in sorted(shown.items())
    ]  # fmt: skip
    return Found(listing_of(row), listed)
