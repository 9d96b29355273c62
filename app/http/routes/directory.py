"""The directory API: ``GET /v1/servers`` (search) and what ``GET /v1/servers/{server_id}``
takes from the directory (the latest signed result's link, the last changes, the registry entry).

The parameters and their refusals are :mod:`app.directory.query`'s (``400 invalid_query``,
``invalid_search``, ``invalid_filter``, ``invalid_sort``, ``invalid_cursor``); a page holds at
most 100 servers and ``next_cursor`` continues it. A category is the check suite's rule over the
tool names (``category_source: "tool_names"``), left out for a tool set 20 or more servers list
identically (:mod:`app.directory.rows`). The route is under the lookup rate limit
(``lookup_rate_limit``, per client, as the check's); it reads the database only and never
contacts a server.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from app.checking.errors import ApiError
from app.checking.services import Services
from app.directory.cursor import DEFAULT_KEY
from app.directory.query import InvalidSearch, Search, parse
from app.directory.search import Listing, Page, RegistryEntry
from app.history.records import Change
from app.http.budget import budgeted
from app.http.routes.ops import services_of
from app.http.routes.paths import READ_S, unavailable
from app.settings import Settings

#: Tool-list changes a server's summary shows (newest first; the rest: ``/changes``).
LAST_CHANGES = 5
CATEGORY_SOURCE = "tool_names"


def cursor_key(settings: Settings) -> bytes:
    """The key of the directory's page cursors (``directory_cursor_key``, else the built-in one)."""
    secret = settings.directory_cursor_key
    return DEFAULT_KEY if secret is None else hashlib.sha256(secret.get_secret_value().encode()).digest()


def search_of(params: dict[str, str], names: list[str], settings: Settings) -> Search:
    """The checked search (:mod:`app.directory.query`).

    Raises:
        ApiError: 400 with the refusal's reason key.
    """
    try:
        return parse(params, names, cursor_key(settings))
    except InvalidSearch as exc:
        raise ApiError(exc.reason, exc.message, 400) from None


async def read_page(services: Services, search: Search) -> Page:
    """A page of ``search``.

    Raises:
        ApiError: 503 ``history_unavailable`` when the database does not answer in time.
    """
    try:
        with anyio.fail_after(READ_S):
            return await services.directory.search(search, cursor_key(services.settings))
    except Exception as exc:  # any driver or network fault, or the bound: the database does not answer
        raise unavailable(exc) from exc


def time_text(moment: datetime | None) -> str | None:
    """RFC 3339 UTC (``Z``), or ``None``."""
    return None if moment is None else moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def listing_json(listing: Listing, base: str) -> dict[str, Any]:
    """A directory row as the API and the lookup tool answer it."""
    return {
        "server_id": listing.server_id,
        "url": listing.url,
        "name": listing.name,
        "title": listing.title,
        "description": listing.description,
        "server_title": listing.server_title,
        "status": listing.status,
        "reason": listing.reason,
        "protocol_version": listing.protocol_version,
        "transport": listing.transport,
        "auth": listing.auth,
        "last_checked": time_text(listing.last_checked),
        "last_changed": time_text(listing.last_changed),
        "uptime_30d": listing.uptime_30d,
        "tool_count": listing.tool_count,
        "category": listing.category,
        "category_source": CATEGORY_SOURCE if listing.category is not None else None,
        "named_by": listing.named_by,
        "publishers": listing.publishers,
        "claimed_at": time_text(listing.claimed_at),
        "links": {"self": f"{base}/v1/servers/{listing.server_id}", "page": f"{base}/servers/{listing.server_id}"},
    }


def page_json(page: Page, search: Search, base: str) -> dict[str, Any]:
    """A page as ``GET /v1/servers`` answers it."""
    return {
        "servers": [listing_json(listing, base) for listing in page.listings],
        "sort": search.sort,
        "limit": search.limit,
        "next_cursor": page.next_cursor,
    }


async def list_servers(request: Request) -> Response:
    """``GET /v1/servers``: see the module docs."""
    services = services_of(request)
    names = [name for name, _value in request.query_params.multi_items()]

    async def answer(client: str) -> Response:
        search = search_of(dict(request.query_params), names, services.settings)
        page = await read_page(services, search)
        return JSONResponse(page_json(page, search, services.settings.public_base_url))

    return await budgeted(request, services, answer, limiter=services.lookup_limiter, fault="mcp-sonde failed")


def entry_json(entry: RegistryEntry) -> dict[str, Any]:
    """A registry entry that lists the server, with its publisher and how the registry verified it."""
    return {"name": entry.name, "version": entry.version, "status": entry.status, "title": entry.title,
            "description": entry.description, "latest": entry.latest, "publisher": entry.publisher,
            "named": entry.named, "namespace_verification": entry.verification.as_json()}  # fmt: skip


def identity_json(listing: Listing | None) -> dict[str, Any] | None:
    """Who speaks for the server (:mod:`app.directory.identity`): the words the directory shows,
    where they came from, how many publishers list it, and the owner's claim."""
    if listing is None:
        return None
    claimed = {"verified_at": time_text(listing.claimed_at)} if listing.claimed_at is not None else None
    return {"name": listing.name, "title": listing.title, "description": listing.description,
            "server_title": listing.server_title, "named_by": listing.named_by,
            "publishers": listing.publishers, "claimed": claimed}  # fmt: skip


def change_json(change: Change, base: str) -> dict[str, Any]:
    """A tool-list change, short (the whole diff: ``/v1/servers/{id}/changes``)."""
    counts = change.diff.get("counts")
    counts = counts if isinstance(counts, dict) else {}
    return {
        "observed_at": time_text(change.observed_at),
        "verdict": change.verdict,
        "counts": {key: int(counts.get(key, 0)) for key in ("added", "removed", "renamed", "changed")},
        "attestation_id": change.run_id,
        "attestation_url": f"{base}/v1/attestations/{change.run_id}",
    }


async def summary_extras(services: Services, server_id: str) -> dict[str, Any]:
    """What ``GET /v1/servers/{server_id}`` adds from the directory: the latest result's facts and
    the link to its signed statement, the category, the last changes, who speaks for the server
    (``identity``), the registry entry that names it (``registry``) and every publisher's entry
    that lists it (``registry_entries``)."""
    history, base = services.recorder.history, services.settings.public_base_url
    try:
        with anyio.fail_after(READ_S):
            found = await services.directory.listing(server_id)
            changes = await history.changes(server_id, LAST_CHANGES)
    except Exception as exc:  # any driver or network fault, or the bound: the database does not answer
        raise unavailable(exc) from exc
    listing, entries = (found.listing, found.entries) if found is not None else (None, [])
    named = next((entry for entry in entries if entry.named), None)
    latest: dict[str, Any] = {}
    if listing is not None:
        latest = {
            "reason": listing.reason,
            "protocol_version": listing.protocol_version,
            "transport": listing.transport,
            "auth": listing.auth,
            "observed_at": time_text(listing.last_checked),
            "attestation_url": f"{base}/v1/attestations/{listing.latest_attestation}"
            if listing.latest_attestation
            else None,
        }
    return {
        "latest": latest,
        "tool_count": listing.tool_count if listing is not None else None,
        "category": listing.category if listing is not None else None,
        "category_source": CATEGORY_SOURCE if listing is not None and listing.category else None,
        "changes": [change_json(change, base) for change in changes],
        "identity": identity_json(listing),
        "registry": entry_json(named) if named is not None else None,
        "registry_entries": [entry_json(entry) for entry in entries],
    }
