"""One page of the registry's ``GET /v0.1/servers`` read into entries, garbage counted.

The format is the registry's published OpenAPI document (modelcontextprotocol/registry,
``docs/reference/api/openapi.yaml``, info.version 2025-12-01; an excerpt is kept in
``tests/data/registry/``): a page is a ``ServerList`` ``{"servers": [ServerResponse, ...],
"metadata": {"nextCursor": string, "count": integer}}``; a ``ServerResponse`` is ``{"server":
ServerDetail, "_meta": {"io.modelcontextprotocol.registry/official": {status, publishedAt,
updatedAt, isLatest}}}``; a ``ServerDetail`` requires ``name``, ``description`` and
``version`` and may list ``remotes`` (``StreamableHttpTransport`` / ``SseTransport``: ``type``,
``url``, ``headers``); its ``title`` and ``description`` are kept, cut to a bound, for the
directory's text search (:mod:`app.directory`). A ``nextCursor`` that is absent, null or empty ends the listing.

Policy: the registry is not trusted. A page that is not JSON, nests too deep, or is not a
``ServerList`` (or repeats a member at its top level or in ``metadata``) is refused whole
(:class:`PageRefused` with a reason key: the listing cannot go on without its cursor). Inside a
page each entry stands alone: one that is malformed, or repeats a member anywhere inside it
(RFC 8259 section 4 leaves duplicate names undefined, so neither value is believed), is counted
under a reason key and skipped; the rest of the page is kept. Nothing here raises for content.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from app import jsonsafe
from app.errors import SondeError

OFFICIAL = "io.modelcontextprotocol.registry/official"
STATUSES = frozenset({"active", "deprecated", "deleted"})
MAX_NAME = 200  # ServerDetail.name maxLength
MAX_VERSION = 255  # ServerDetail.version maxLength
MAX_CURSOR = 1024
MAX_TITLE = 100  # ServerDetail.title maxLength
MAX_DESCRIPTION = 1000  # kept of ServerDetail.description (the directory's text search reads it)


class PageRefused(SondeError):
    """The page is not a ``ServerList``: ``page_not_json``, ``page_too_deep``, ``page_shape``,
    ``page_duplicate_member``."""


class _Duplicated(dict[str, Any]):
    """An object that gave a member twice (kept, marked, so its entry alone is skipped)."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    made = dict(pairs)
    return _Duplicated(made) if len(made) != len(pairs) else made


@dataclass(frozen=True)
class Remote:
    """One ``remotes`` item as listed: ``type``, ``url`` and the names of headers it requires."""

    transport: str
    url: str
    required_headers: tuple[str, ...]


@dataclass(frozen=True)
class Entry:
    """One ``ServerResponse`` that passed the checks."""

    name: str
    version: str
    status: str
    published_at: datetime | None
    updated_at: datetime | None
    latest: bool
    remotes: tuple[Remote, ...]
    title: str | None = None
    description: str | None = None


@dataclass
class Page:
    """A page read: its entries, the next cursor (``None``: the last page), what was skipped."""

    entries: list[Entry]
    next_cursor: str | None
    skipped: Counter[str] = field(default_factory=Counter)


def read_page(body: bytes) -> Page:
    """Read one page (see the module docs).

    Raises:
        PageRefused: the page as a whole is not a ``ServerList``.
    """
    try:
        document = jsonsafe.loads(body, object_pairs_hook=_pairs)
    except jsonsafe.TooDeep:
        raise PageRefused("page_too_deep", "the page nests too deep") from None
    except ValueError:  # (UnicodeDecodeError is one)
        raise PageRefused("page_not_json", "the page is not JSON") from None
    if not isinstance(document, dict) or not isinstance(document.get("servers"), list):
        raise PageRefused("page_shape", "the page is not a ServerList (no servers array)")
    metadata = document.get("metadata", {})
    if isinstance(document, _Duplicated) or isinstance(metadata, _Duplicated):
        raise PageRefused("page_duplicate_member", "the page gives a member twice")
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise PageRefused("page_shape", "the page's metadata is not an object")
    cursor = metadata.get("nextCursor")
    if cursor is not None and (not isinstance(cursor, str) or len(cursor) > MAX_CURSOR):
        raise PageRefused("page_shape", "the page's nextCursor is not a string of at most 1024 characters")
    page = Page(entries=[], next_cursor=cursor or None)
    for item in document["servers"]:
        entry = _entry(item, page.skipped)
        if entry is not None:
            page.entries.append(entry)
    return page


def _entry(item: Any, skipped: Counter[str]) -> Entry | None:
    if not isinstance(item, dict) or not isinstance(item.get("server"), dict):
        skipped["entry_shape"] += 1
        return None
    if _has_duplicate(item):
        skipped["entry_duplicate_member"] += 1
        return None
    server = item["server"]
    name, version = server.get("name"), server.get("version")
    if not isinstance(name, str) or not 3 <= len(name) <= MAX_NAME or name.count("/") != 1:
        skipped["entry_name_invalid"] += 1
        return None
    if not isinstance(version, str) or not 1 <= len(version) <= MAX_VERSION:
        skipped["entry_version_invalid"] += 1
        return None
    meta = item.get("_meta") or {}
    official = meta.get(OFFICIAL) if isinstance(meta, dict) else None
    if official is None:
        official = {}
    if not isinstance(official, dict):
        skipped["entry_meta_invalid"] += 1
        return None
    status = official.get("status", "active")
    latest = official.get("isLatest", True)
    if status not in STATUSES or not isinstance(latest, bool):
        skipped["entry_meta_invalid"] += 1
        return None
    try:
        published_at = _moment(official.get("publishedAt"))
        updated_at = _moment(official.get("updatedAt"))
    except ValueError:
        skipped["entry_time_invalid"] += 1
        return None
    remotes = server.get("remotes", [])
    if remotes is None:
        remotes = []
    if not isinstance(remotes, list):
        skipped["entry_remotes_invalid"] += 1
        return None
    listed = []
    for raw in remotes:
        remote = _remote(raw, skipped)
        if remote is not None:
            listed.append(remote)
    title, description = _text(server.get("title"), MAX_TITLE), _text(server.get("description"), MAX_DESCRIPTION)
    return Entry(name, version, status, published_at, updated_at, latest, tuple(listed), title, description)


def _text(value: Any, limit: int) -> str | None:
    """A display text as listed, cut to ``limit`` characters (``None``: absent, empty or not a string;
    the entry stands without it, as these members only describe)."""
    if not isinstance(value, str) or not value.strip():
        return None
    return value[:limit]


def _remote(raw: Any, skipped: Counter[str]) -> Remote | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("url"), str) or not raw["url"]:
        skipped["remote_shape"] += 1
        return None
    transport = raw.get("type")
    if transport not in ("streamable-http", "sse"):
        skipped["remote_transport_unknown"] += 1
        return None
    headers = raw.get("headers") or []
    named = isinstance(headers, list) and all(isinstance(h, dict) and isinstance(h.get("name"), str) for h in headers)
    if not named:
        skipped["remote_headers_invalid"] += 1
        return None
    required = tuple(h["name"] for h in headers if h.get("isRequired") is True or h.get("isSecret") is True)
    return Remote(transport, raw["url"], required)


def _moment(value: Any) -> datetime | None:
    """An RFC 3339 date-time (``format: date-time``), in UTC; ``None`` when absent."""
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > 64 or "T" not in value.upper():
        raise ValueError("not an RFC 3339 date-time")
    parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        raise ValueError("an RFC 3339 date-time has an offset")
    return parsed.astimezone(UTC)


def _has_duplicate(value: Any) -> bool:
    if isinstance(value, _Duplicated):
        return True
    if isinstance(value, dict):
        return any(_has_duplicate(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_duplicate(v) for v in value)
    return False
