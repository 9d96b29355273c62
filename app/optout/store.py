"""The opt-out list: hosts and URLs that sweeps and scheduled probes never contact.

An operator opts out with ``mcp-sonde optout add`` or ``POST /v1/admin/optout`` (for someone
who asked, through the page at ``GET /probe``). Each item is a host or a URL:

- a **host** (``example.com``) covers that host *and every subdomain of it*
  (``mcp.example.com``, ``a.b.example.com``): the owner of a domain speaks for the names under
  it, and one line must be enough to stop all of them. A host is normalised as the target
  guard does (IDNA UTS #46, lower case, no trailing dot), so ``EXAMPLE.com.`` is ``example.com``.
  A public suffix (``com``, ``co.uk``, ``github.io``: :mod:`app.guard.suffix`) is refused as a
  host item: nobody speaks for every domain under it. A URL on such a host is one endpoint and
  is taken.
- a **URL** (``https://example.com/mcp``) covers that endpoint only: the URL normalised by the
  guard (scheme and host in lower case, default port dropped), without its query string,
  its path in the normal form of RFC 3986 section 6.2.2 (dot segments removed, section
  5.2.4, as the HTTP client does before it sends a request; percent-encoded unreserved
  characters decoded and other percent-encodings in upper case, section 6.2.2.2), compared
  exactly (``/mcp`` does not cover ``/mcp/other``, but ``/x/../mcp`` and ``/%6Dcp`` are
  ``/mcp``: spelt so, a URL still reaches the endpoint that opted out). Beyond RFC 3986, which
  keeps them distinct, empty segments and a trailing slash are dropped too (``//mcp``,
  ``/mcp/`` and ``/mcp//`` are ``/mcp``): servers route them alike (Starlette redirects one
  to the other), and a list that stops contact fails closed, never letting a spelling through.

The list is honoured twice: before anything is enqueued (the sweep source never hands out a
job for a listed host or URL, :mod:`app.sweeps.source`) and right before a probe
(:func:`opted_out`, which the probe job's handler calls with the job's URL): an item added
while a job waits in the queue still stops it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from sqlalchemy import delete, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.tables.registry import optout
from app.errors import SondeError, TargetRefused
from app.guard import check_url
from app.guard.suffix import is_public_suffix

Kind = Literal["host", "url"]
MAX_VALUE = 2048
_PERCENT = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


class OptOutInvalid(SondeError):
    """The item is neither a host name nor an http(s) URL (``optout_invalid``)."""

    def __init__(self, message: str) -> None:
        super().__init__("optout_invalid", message)


@dataclass(frozen=True)
class OptOut:
    """One item of the list."""

    kind: Kind
    value: str
    added_at: datetime


def _decoded(match: re.Match[str]) -> str:
    char = chr(int(match.group(1), 16))
    return char if char in _UNRESERVED else "%" + match.group(1).upper()


def _without_dot_segments(path: str) -> str:
    """RFC 3986 section 5.2.4 (remove_dot_segments) on an absolute path."""
    kept: list[str] = []
    segments = path.split("/")
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == ".":
            if last:
                kept.append("")
        elif segment == "..":
            if len(kept) > 1:
                kept.pop()
            if last:
                kept.append("")
        else:
            kept.append(segment)
    joined = "/".join(kept)
    return joined if joined.startswith("/") else "/" + joined


def canonical(url: str) -> str:
    """``url`` without its query string or fragment, its path in normal form (see the module docs)."""
    parts = urlsplit(url)
    path = _without_dot_segments(_PERCENT.sub(_decoded, parts.path or "/"))
    path = "/" + "/".join(segment for segment in path.split("/") if segment)
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def normalise(item: str) -> tuple[Kind, str]:
    """``(kind, value)`` of an item as given (a URL when it holds ``://``, else a host).

    Raises:
        OptOutInvalid: neither.
    """
    text = item.strip()
    if not text or len(text) > MAX_VALUE:
        raise OptOutInvalid("give a host name or an http(s) URL (at most 2048 characters)")
    try:
        if "://" in text:
            return "url", canonical(check_url(text, allow_private=True).url)
        if any(c in text for c in "/?#@:"):
            raise OptOutInvalid("a host is a name alone (no scheme, port or path); or give a whole URL")
        host = check_url(f"https://{text}/", allow_private=True).host
    except TargetRefused as exc:
        raise OptOutInvalid(f"not a host name or http(s) URL ({exc.reason})") from None
    if is_public_suffix(host):
        raise OptOutInvalid(f"{host} is a public suffix (publicsuffix.org): give a domain under it, or a URL")
    return "host", host


def _host_and_url(url: str) -> tuple[str, str]:
    try:
        target = check_url(url, allow_private=True)
        return target.host, canonical(target.url)
    except TargetRefused:  # (an unusual spelling: compare what it plainly names)
        parts = urlsplit(url)
        return (parts.hostname or "").rstrip(".").lower(), canonical(url)


def matches(url: str, items: list[OptOut]) -> bool:
    """Whether ``url`` is covered by one of ``items`` (see the module docs)."""
    host, bare = _host_and_url(url)
    for item in items:
        if item.kind == "url" and canonical(item.value) == bare:  # (an item stored before paths were normalised)
            return True
        if item.kind == "host" and (host == item.value or host.endswith("." + item.value)):
            return True
    return False


class OptOutList:
    """The list in the database."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def add(self, item: str) -> tuple[OptOut, bool]:
        """Add ``item``; the stored item and whether it is new."""
        kind, value = normalise(item)
        insert = postgresql.insert if self.engine.dialect.name == "postgresql" else sqlite.insert
        async with self.engine.begin() as db:
            made = await db.execute(
                insert(optout).values(kind=kind, value=value, added_at=datetime.now(UTC))
                .on_conflict_do_nothing(index_elements=["kind", "value"])
            )  # fmt: skip
            row = (await db.execute(select(optout).where(optout.c.kind == kind, optout.c.value == value))).one()
        return OptOut(row.kind, row.value, _utc(row.added_at)), made.rowcount == 1

    async def remove(self, item: str) -> bool:
        """Remove ``item``; whether it was listed."""
        kind, value = normalise(item)
        async with self.engine.begin() as db:
            gone = await db.execute(delete(optout).where(optout.c.kind == kind, optout.c.value == value))
        return gone.rowcount > 0

    async def items(self) -> list[OptOut]:
        """Every item, oldest first."""
        async with self.engine.connect() as db:
            rows = (await db.execute(select(optout).order_by(optout.c.id))).all()
        return [OptOut(row.kind, row.value, _utc(row.added_at)) for row in rows]

    async def covers(self, url: str) -> bool:
        """Whether ``url`` is opted out."""
        return matches(url, await self.items())


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


async def opted_out(db: AsyncEngine | OptOutList, url: str) -> bool:
    """Whether ``url`` is opted out (the check a probe job's handler makes right before it
    probes: a ``True`` means the job ends as ``skipped`` with reason ``opted_out``, nothing
    contacted)."""
    listed = db if isinstance(db, OptOutList) else OptOutList(db)
    return await listed.covers(url)
