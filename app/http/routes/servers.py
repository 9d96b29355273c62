"""The stored history of a server: ``GET /v1/servers/{server_id}``, ``/history``, and the uptime badge.

``server_id`` is the first 24 hex characters of the SHA-256 of the server's normalised URL
without its query string (:func:`app.history.records.server_id_of`); anything else, and an id
never checked here, is ``404 server_not_found``. A database that does not answer is ``503
history_unavailable`` (the uptime badge is drawn grey, ``unknown``, as badges always answer 200).
These reads never contact the server.
"""

from __future__ import annotations

import functools
import hashlib
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from app.checking.errors import ApiError
from app.checking.links import badge_query, uptime_badge_markdown
from app.checking.services import Services
from app.errors import TargetRefused
from app.guard import check_url
from app.history import report
from app.history.records import server_id_of
from app.http.badges.drawing import ANY_PAGE, CSP, SVG_TYPE, if_none_match, not_modified
from app.http.routes.directory import summary_extras
from app.http.routes.ops import services_of
from app.http.routes.paths import BADGE_READ_S, CACHE, READ_S, server_id_in_path, unavailable
from badges import STYLES, Style, render_svg

DAYS = re.compile(r"[0-9]{1,2}")  # ASCII digits only: int() would take "+5" and full-width digits


async def server(request: Request) -> Response:
    """``GET /v1/servers/{server_id}``: identity, the latest run (with the link to its signed
    statement), uptime rates, the badge snippet, the category, the last changes and the registry
    entry it came from (:func:`app.http.routes.directory.summary_extras`)."""
    services, server_id = services_of(request), server_id_in_path(request)
    return JSONResponse(await summary_document(services, server_id), headers=CACHE)


async def summary_document(services: Services, server_id: str) -> dict[str, Any]:
    """What ``GET /v1/servers/{server_id}`` answers (the ``get_mcp_server_report`` tool too).

    Raises:
        ApiError: 404 ``server_not_found``, 503 ``history_unavailable``.
    """
    history = services.recorder.history
    now = datetime.now(UTC)
    try:
        with anyio.fail_after(READ_S):
            found = await history.server(server_id)
            days = await history.days(server_id, (now - timedelta(days=89)).date()) if found else []
    except Exception as exc:  # any driver or network fault: the database does not answer
        raise unavailable(exc) from exc
    if found is None:
        raise ApiError("server_not_found", "no check of this server is kept here")
    base = services.settings.public_base_url
    badge = f"{base}/badge/mcp/uptime{badge_query(found.url)}"
    extras = await summary_extras(services, server_id)
    return {
        "server_id": found.server_id,
        "url": found.url,
        "first_seen": _time(found.first_seen),
        "last_seen": _time(found.last_seen),
        "latest": {"status": found.latest_status, "attestation_id": found.latest_attestation_id} | extras.pop("latest"),
        "uptime": report.rates(days, now.date()),
        "badge": {
            "uptime_svg": badge,
            "markdown": uptime_badge_markdown(base, found.url),
        },  # (its page)
        **extras,
    }


async def server_history(request: Request) -> Response:
    """``GET /v1/servers/{server_id}/history?days=90``: daily states, latency percentiles, status changes."""
    services, server_id = services_of(request), server_id_in_path(request)
    asked = request.query_params.get("days", "90")
    window = int(asked) if DAYS.fullmatch(asked) else 0
    if not 1 <= window <= 90:
        raise ApiError("invalid_query", "days is a whole number from 1 to 90")
    return JSONResponse(await history_document(services, server_id, window), headers=CACHE)


async def history_document(services: Services, server_id: str, window: int) -> dict[str, Any]:
    """What ``GET /v1/servers/{server_id}/history?days=<window>`` answers (the
    ``get_mcp_server_history`` tool too).

    Raises:
        ApiError: 404 ``server_not_found``, 503 ``history_unavailable``.
    """
    history = services.recorder.history
    now = datetime.now(UTC)
    since = now - timedelta(days=window - 1)
    try:
        with anyio.fail_after(READ_S):
            found = await history.history(server_id, since.replace(hour=0, minute=0, second=0, microsecond=0))
    except Exception as exc:  # any driver or network fault: the database does not answer
        raise unavailable(exc) from exc
    if found is None:
        raise ApiError("server_not_found", "no check of this server is kept here")
    runs = found.window
    return {
        "server_id": server_id,
        "days": report.daily(found.days),
        "uptime": report.rates(found.days, now.date()),
        "latency": runs.latency | {"runs": runs.reached},
        "status_changes": runs.status_changes,
        "runs": runs.runs,
    }


def _time(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


async def uptime_state(services: Services, url: str, window: int) -> tuple[str, str]:
    """``(message, colour)`` of the uptime badge of ``url`` over ``window`` days."""
    try:
        target = check_url(url, allow_private=services.settings.allow_private)
    except TargetRefused:
        return "invalid url", "lightgrey"
    now = datetime.now(UTC)
    try:
        with anyio.fail_after(BADGE_READ_S):
            since = (now - timedelta(days=window - 1)).date()
            days = await services.recorder.history.days(server_id_of(target.url), since)
    except Exception:  # any driver or network fault: the badge still answers
        return "unknown", "lightgrey"
    rate = report.rates(days, now.date())[f"{window}d"]
    if rate["rate"] is None or rate["counted_days"] < report.MIN_COUNTED_DAYS:
        return f"collecting ({rate['counted_days']}d)", "lightgrey"
    percent = rate["rate"] * 100
    color = "brightgreen" if percent >= 99 else "green" if percent >= 95 else "yellow" if percent >= 90 else "red"
    return f"{percent:.1f}% ({window}d)", color


@functools.lru_cache(maxsize=1024)
def _uptime_svg(message: str, color: str, style: Style) -> tuple[bytes, str]:
    body = render_svg("uptime", message, color, style=style).encode()
    return body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


async def uptime_badge(request: Request) -> Response:
    """``GET /badge/mcp/uptime?url=...&window=30&style=flat``: ``uptime | 99.2% (30d)`` from stored
    runs (grey while fewer than 7 days are counted); always 200 with an image, never a probe."""
    window = {"7": 7, "30": 30, "90": 90}.get(request.query_params.get("window", "30"), 30)
    asked = request.query_params.get("style", "flat")
    style: Style = asked if asked in STYLES else "flat"
    message, color = await uptime_state(services_of(request), request.query_params.get("url", ""), window)
    body, etag = _uptime_svg(message, color, style)
    headers = {"Cache-Control": "max-age=300, s-maxage=300", "ETag": etag, "X-Content-Type-Options": "nosniff",
               "Content-Security-Policy": CSP, **ANY_PAGE}  # fmt: skip
    if not_modified(if_none_match(request.headers.getlist("if-none-match")), etag):
        return Response(status_code=304, headers=headers)
    return Response(body, media_type=SVG_TYPE, headers=headers)
