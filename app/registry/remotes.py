"""What of a registry ``remote`` may be probed, and the reason key when it may not.

A remote is kept in the mirror either way (an operator can see why it is not swept); it is
skipped, with the first reason that applies, when:

- ``url_template``: its URL holds ``{variables}``: the published schema calls the URL of a
  ``StreamableHttpTransport`` a template whose ``{curly_braces}`` name argument values or
  environment variables the user supplies; we have none to put there.
- ``needs_headers``: it declares a header that ``isRequired`` (or ``isSecret``): the server
  wants something from its user (an API key, mostly) that a sweep never sends.
- ``refused:<reason>``: the target guard (:func:`app.guard.check_url`) refuses its form
  (``scheme_not_https``, ``host_ip_literal`` for a private address written as an IP, ...).
  Addresses are checked when the probe resolves the host, not here.
- ``query_string``: its URL holds a query string: queries often carry keys, and stored records
  never hold one (:func:`app.guard.url.without_query`).

A refused remote is kept as listed but cut to :data:`MAX_STORED_URL` characters and without
what a stored record never holds: its query string, fragment and user info (a URL listed
as ``https://user:key@host/`` keeps ``https://host/``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.errors import TargetRefused
from app.guard import check_url
from app.history.records import server_id_of
from app.registry.page import Remote

_TEMPLATE = re.compile(r"\{[^{}]*\}")
MAX_STORED_URL = 2048


@dataclass(frozen=True)
class Endpoint:
    """A remote as the mirror keeps it: ``url`` normalised (or as listed, cut, when refused)."""

    url: str
    host: str
    transport: str
    server_id: str
    skip_reason: str | None


def endpoint_of(remote: Remote, *, allow_private: bool) -> Endpoint:
    """The :class:`Endpoint` of ``remote`` (see the module docs)."""
    listed = _kept(remote.url)
    if _TEMPLATE.search(remote.url):
        return Endpoint(listed, "", remote.transport, server_id_of(listed), "url_template")
    if remote.required_headers:
        return _checked(remote, listed, allow_private, "needs_headers")
    return _checked(remote, listed, allow_private, None)


def _kept(url: str) -> str:
    """``url`` as a stored record may hold it (see the module docs)."""
    cut = url[:MAX_STORED_URL].split("?", 1)[0].split("#", 1)[0]
    scheme, sep, rest = cut.partition("://")
    if not sep:
        scheme, rest = "", cut
    authority, slash, path = rest.partition("/")
    return f"{scheme}{sep}{authority.rpartition('@')[2]}{slash}{path}"


def _checked(remote: Remote, listed: str, allow_private: bool, reason: str | None) -> Endpoint:
    try:
        target = check_url(remote.url, allow_private=allow_private)
    except TargetRefused as exc:
        return Endpoint(listed, "", remote.transport, server_id_of(listed), reason or f"refused:{exc.reason}")
    url = target.url.split("?", 1)[0]
    if reason is None and "?" in target.url:
        reason = "query_string"
    return Endpoint(url, target.host, remote.transport, server_id_of(url), reason)
