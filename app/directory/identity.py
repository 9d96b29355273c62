"""Who speaks for a server in the directory: its owner, one registry publisher, or nobody.

A server's identity (the title and description a directory row shows, and the registry name it
sorts by) is taken only from what is tied to the endpoint:

- registry entries whose remote for this very endpoint was probed (``skip_reason`` empty): an
  entry whose remote is the endpoint's URL with a query string, a template or headers was never
  probed, so it says nothing of this server and never names it;
- of those, entries are grouped by publisher (the namespace, :mod:`app.directory.namespaces`).
  The active entries count; when none is active, all do. One publisher: its best entry (the
  latest version, then the most recently updated) names the row (``named_by: registry``).
  Several publishers: no entry's words are the row's; each is shown beside its publisher
  (``publishers`` says how many), never merged into one name;
- an owner who proved control of the host (:mod:`app.claims`) and set a display name or a
  description comes first (``named_by: owner``); the registry name, if one publisher's, stays
  the row's sort name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import Select, select

from app.db.tables.registry import registry_endpoints, registry_entries
from app.directory.namespaces import namespace_of


class EntryRow(Protocol):
    """A registry entry as read for a server (a row of the entry query)."""

    id: int
    name: str
    version: str
    status: str
    latest: bool
    updated_at: datetime | None
    title: str | None
    description: str | None


@dataclass(frozen=True)
class Identity:
    """What a directory row shows as the server's identity (see the module docs)."""

    entry: int | None
    name: str | None
    title: str | None
    description: str | None
    named_by: str | None
    publishers: int


def probed_entries(server_id: str) -> Select[Any]:
    """The registry entries that list the server with a remote that was probed."""
    e, p = registry_entries, registry_endpoints
    return (
        select(e.c.id, e.c.name, e.c.version, e.c.status, e.c.latest, e.c.updated_at, e.c.title, e.c.description)
        .join(p, p.c.entry == e.c.id)
        .where(p.c.server_id == server_id, p.c.skip_reason.is_(None))
        .distinct()
    )


def _rank(entry: EntryRow) -> tuple[bool, float, int]:
    moment = entry.updated_at.timestamp() if entry.updated_at is not None else 0.0
    return (not entry.latest, -moment, -entry.id)


def best_by_publisher(entries: Sequence[EntryRow]) -> dict[str, EntryRow]:
    """The entry that speaks for each publisher (namespace), among those that count."""
    active = [entry for entry in entries if entry.status == "active"]
    counted = active or list(entries)
    best: dict[str, EntryRow] = {}
    for entry in sorted(counted, key=_rank):
        best.setdefault(namespace_of(entry.name), entry)
    return best


def identity_of(entries: Sequence[EntryRow], profile: Any | None) -> Identity:
    """The identity of a server from its probed registry entries and its owner's profile
    (``display_name``, ``description``; ``None``: no verified owner has set one)."""
    best = best_by_publisher(entries)
    single = next(iter(best.values())) if len(best) == 1 else None
    name = single.name if single is not None else None
    title = single.title if single is not None else None
    description = single.description if single is not None else None
    named_by = "registry" if single is not None else None
    if profile is not None and (profile.display_name or profile.description):
        title, description, named_by = profile.display_name, profile.description, "owner"
    return Identity(single.id if single is not None else None, name, title, description, named_by, len(best))
