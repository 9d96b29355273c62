"""``/servers``: the directory for people, a plain GET form over :mod:`app.directory`.

The form's fields are the search's parameters (:mod:`app.directory.query`), so the page works
without JavaScript and each result page has its own URL; each row links to ``/servers/{id}``,
and the next page is a link carrying the cursor. A parameter the search refuses is shown above
the form with its reason key (answer ``400``); the lookup rate limit applies as on the API
(``429`` as the HTML error page). The page reads the database only and contacts no server.
"""

from __future__ import annotations

from datetime import UTC
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response

from app.checking.clients import rate_key
from app.checking.errors import ApiError
from app.directory.query import AUTH, SORTS, TRANSPORTS, Search
from app.directory.search import Listing
from app.http.middleware.clientip import client_ip
from app.http.pages import units
from app.http.pages.explain import explain_refusal
from app.http.pages.render import error_page, page
from app.http.pages.views import CUES, STATUS_WORDS, standing
from app.http.routes.directory import read_page, search_of
from app.http.routes.ops import services_of
from app.probe.reasons import STATUSES
from app.suite.category import rules

#: The ``changed_within`` choices the form offers (any other value typed into the URL still works).
CHANGED = ("7d", "30d", "90d")
SORT_WORDS = {"name": "Name", "last_checked": "Last checked", "uptime": "Uptime (30 days)"}
#: The fields folded under "Filters and order" (the words field stays in sight).
FOLDED = ("category", "status", "auth", "transport", "protocol_version", "changed_within", "sort")


def _row(listing: Listing) -> dict[str, Any]:
    return {
        "server_id": listing.server_id,
        "label": listing.title or listing.name or listing.server_title or listing.host,
        "name": listing.name,
        "url": listing.url,
        "description": listing.description,
        "status": listing.status,
        "status_words": STATUS_WORDS.get(listing.status or "", listing.status),
        "standing": standing(listing.status),
        "cue": CUES[standing(listing.status)],
        "auth": listing.auth,
        "category": listing.category,
        "tool_count": listing.tool_count,
        "uptime": listing.uptime_30d,
        "protocol_version": listing.protocol_version,
        "last_checked": units.moment(listing.last_checked),
        "named_by": listing.named_by,
        "publishers": listing.publishers,
        "claimed": listing.claimed_at.astimezone(UTC).strftime("%Y-%m-%d") if listing.claimed_at else None,
    }


def _form(params: dict[str, str]) -> dict[str, Any]:
    return {
        "given": params,
        "narrowed": sum(1 for name in FOLDED if params.get(name) and not (name == "sort" and params[name] == "name")),
        "categories": [(topic, topic.replace("_", " ")) for topic in sorted(rules().topics)],
        "statuses": [(status, status) for status in STATUSES],
        "transports": [(transport, transport) for transport in TRANSPORTS],
        "auth": [(auth, auth) for auth in AUTH],
        "changed": [(days, days.replace("d", " days")) for days in CHANGED],
        "sorts": [(sort, SORT_WORDS[sort]) for sort in SORTS],
    }


async def directory_page(request: Request) -> Response:
    """``GET /servers`` (see the module docs)."""
    services = services_of(request)
    params = dict(request.query_params)
    names = [name for name, _value in request.query_params.multi_items()]
    try:
        await services.admit(rate_key(client_ip(request, services.trusted_proxies)), services.lookup_limiter)
    except ApiError as exc:
        return error_page(request, exc)
    context: dict[str, Any] = {"form": _form(params), "error": None, "rows": [], "next_url": None, "first_url": None}
    try:
        search: Search = search_of(params, names, services.settings)
    except ApiError as exc:
        context["error"] = {"reason": exc.reason, "detail": exc.message, "meaning": explain_refusal(exc.reason)}
        return page(request, "servers.html", context, status=400)
    try:
        found = await read_page(services, search)
    except ApiError as exc:
        return error_page(request, exc)
    kept = search.filters() | ({"sort": search.sort} if search.sort != "name" else {})
    if search.limit != 20:
        kept["limit"] = str(search.limit)
    context["rows"] = [_row(listing) for listing in found.listings]
    if found.next_cursor is not None:
        context["next_url"] = "/servers?" + urlencode(kept | {"cursor": found.next_cursor})
    if search.after is not None:
        context["first_url"] = "/servers" + ("?" + urlencode(kept) if kept else "")
    return page(request, "servers.html", context, headers={"Cache-Control": "no-store"})
