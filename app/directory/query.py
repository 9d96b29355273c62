"""A directory search's parameters, read and checked (for ``GET /v1/servers``, the ``/servers``
page and the ``search_mcp_servers`` tool alike).

Parameters (all optional; any other name is ``invalid_query``):

- ``q``: text, at most :data:`MAX_TEXT` characters and :data:`MAX_WORDS` words; every word
  (lower-cased, matched as a substring) must occur in the URL, registry name, title,
  description or a tool name (``invalid_search`` otherwise);
- ``category``: a topic of ``categories.yaml``; ``status``: a status class
  (:data:`app.probe.reasons.STATUSES`); ``protocol_version``: a revision (``YYYY-MM-DD``);
  ``transport``: ``streamable_http`` or ``sse``; ``auth``: ``gated`` or ``open``;
  ``changed_within``: ``<days>d``, 1 to 365 days, the tool list changed that recently
  (``invalid_filter`` for any bad value);
- ``sort``: ``name`` (the default: registry name, else host, A to Z), ``last_checked`` (newest
  first) or ``uptime`` (30-day rate, highest first; unknown last); each ties on the server id,
  so the order is total and stable (``invalid_sort``);
- ``limit``: 1 to :data:`MAX_LIMIT`, default :data:`DEFAULT_LIMIT` (``invalid_query``);
- ``cursor``: the ``next_cursor`` of the page before (:mod:`app.directory.cursor`,
  ``invalid_cursor``).

Each refusal is an :class:`InvalidSearch` with its reason key and the parameter it is about.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from app.directory import cursor as cursors
from app.errors import SondeError
from app.probe.reasons import STATUSES
from app.suite.category import rules

MAX_TEXT = 200
MAX_WORDS = 8
MAX_LIMIT = 100
DEFAULT_LIMIT = 20
SORTS = ("name", "last_checked", "uptime")
TRANSPORTS = ("streamable_http", "sse")
AUTH = ("gated", "open")
MAX_DAYS = 365
PARAMETERS = frozenset(
    {"q", "category", "status", "protocol_version", "transport", "auth", "changed_within", "sort", "limit", "cursor"}
)
_REVISION = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DAYS = re.compile(r"([0-9]{1,3})d")
_LIMIT = re.compile(r"[0-9]{1,3}")


class InvalidSearch(SondeError):
    """A parameter that is not one a search takes (``reason``; ``parameter`` names it)."""

    def __init__(self, reason: str, parameter: str, message: str) -> None:
        super().__init__(reason, message)
        self.parameter = parameter


@dataclass(frozen=True)
class Search:
    """A checked search."""

    words: tuple[str, ...] = ()
    text: str = ""
    category: str | None = None
    status: str | None = None
    protocol_version: str | None = None
    transport: str | None = None
    auth: str | None = None
    changed_within_days: int | None = None
    sort: str = "name"
    limit: int = DEFAULT_LIMIT
    after: cursors.Position | None = field(default=None)

    def digest(self) -> str:
        """What the search's cursors are bound to: its text and filters (not its sort, limit or position)."""
        facts = [self.words, self.category, self.status, self.protocol_version, self.transport, self.auth,
                 self.changed_within_days]  # fmt: skip
        return hashlib.sha256(json.dumps(facts).encode()).hexdigest()[:32]

    def filters(self) -> dict[str, str]:
        """The text and filters as query parameters (for links to the next page)."""
        given = {
            "q": self.text,
            "category": self.category,
            "status": self.status,
            "protocol_version": self.protocol_version,
            "transport": self.transport,
            "auth": self.auth,
            "changed_within": f"{self.changed_within_days}d" if self.changed_within_days else None,
        }
        return {name: value for name, value in given.items() if value}


def _one_of(params: Mapping[str, str], name: str, allowed: tuple[str, ...] | frozenset[str]) -> str | None:
    value = params.get(name, "").strip()
    if not value:
        return None
    if value not in allowed:
        raise InvalidSearch("invalid_filter", name, f"{name} is one of: {', '.join(sorted(allowed))}")
    return value


def parse(params: Mapping[str, str], names: list[str] | None = None, key: bytes = cursors.DEFAULT_KEY) -> Search:
    """The search ``params`` ask for (``names``: every parameter name given, repeated ones included).

    Raises:
        InvalidSearch: a parameter that is not one a search takes (see the module docs).
    """
    given = names if names is not None else list(params)
    for name in given:
        if name not in PARAMETERS:
            raise InvalidSearch("invalid_query", name, f"{name} is not a parameter of the directory")
    if len(given) != len(set(given)):
        twice = next(name for name in given if given.count(name) > 1)
        raise InvalidSearch("invalid_query", twice, f"{twice} is given more than once")
    text = params.get("q", "")
    words = tuple(dict.fromkeys(text.lower().split()))
    if len(text) > MAX_TEXT or len(words) > MAX_WORDS:
        raise InvalidSearch("invalid_search", "q", f"q is at most {MAX_TEXT} characters and {MAX_WORDS} words")
    revision = params.get("protocol_version", "").strip() or None
    if revision is not None and not _REVISION.fullmatch(revision):
        raise InvalidSearch("invalid_filter", "protocol_version", "protocol_version is a revision, YYYY-MM-DD")
    days: int | None = None
    within = params.get("changed_within", "").strip()
    if within:
        matched = _DAYS.fullmatch(within)
        days = int(matched.group(1)) if matched else 0
        if not 1 <= days <= MAX_DAYS:
            raise InvalidSearch("invalid_filter", "changed_within", f"changed_within is 1d to {MAX_DAYS}d")
    sort = params.get("sort", "").strip() or "name"
    if sort not in SORTS:
        raise InvalidSearch("invalid_sort", "sort", f"sort is one of: {', '.join(SORTS)}")
    asked = params.get("limit", "").strip()
    limit = int(asked) if _LIMIT.fullmatch(asked) else (DEFAULT_LIMIT if not asked else 0)
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidSearch("invalid_query", "limit", f"limit is a whole number from 1 to {MAX_LIMIT}")
    search = Search(
        words=words,
        text=" ".join(words),
        category=_one_of(params, "category", frozenset(rules().topics)),
        status=_one_of(params, "status", frozenset(STATUSES)),
        protocol_version=revision,
        transport=_one_of(params, "transport", TRANSPORTS),
        auth=_one_of(params, "auth", AUTH),
        changed_within_days=days,
        sort=sort,
        limit=limit,
    )
    if "cursor" not in params:
        return search
    token = params["cursor"]  # (given empty is a bad cursor, not the first page)
    try:
        after = cursors.decode(token, sort, search.digest(), key)
    except cursors.BadCursor as exc:
        raise InvalidSearch("invalid_cursor", "cursor", exc.message) from None
    return Search(**{**search.__dict__, "after": after})
