"""``GET /v1/servers/{server_id}/changes``: a server's tool-list changes, newest first, a page at a time.

Policy: as the other history reads (:mod:`app.http.routes.servers`): an id that is not 24 hex
characters, or of a server never checked here, is ``404 server_not_found`` (a server kept
here without a change is 200 with an empty list); a database that does not answer is
``503 history_unavailable``; the server is never contacted. ``limit`` is 1 to
:data:`MAX_LIMIT` (default 50); ``before`` an RFC 3339 date-time with its offset (``Z`` or
``±hh:mm``); anything else ``400 invalid_query``.

Paging: a full page (``limit`` changes) carries ``next``, the ``before`` of the following page:
the time of its oldest change, in RFC 3339 UTC with microseconds, the precision changes are
stored with (a page that is not full is the last, and says ``null``). Changes observed at the
very same microsecond as that oldest one and left off the page would be skipped; the runs of
one server are never that close.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from app.checking.errors import ApiError
from app.checking.services import Services
from app.drift import ToolListDiff
from app.history.records import Change
from app.http.routes.paths import CACHE, READ_S, server_id_in_path, unavailable

MAX_LIMIT = 200
DEFAULT_LIMIT = 50
_RFC3339 = re.compile(
    r"^([0-9]{4}-[0-9]{2}-[0-9]{2})[Tt]([0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.([0-9]{1,9}))?([Zz]|[+-][0-9]{2}:[0-9]{2})$"
)


def parse_time(text: str) -> datetime:
    """An RFC 3339 date-time (section 5.6; fractions past microseconds are cut), as aware UTC.

    Raises:
        ValueError: not one (a leap second, ``:60``, is not taken either).
    """
    found = _RFC3339.fullmatch(text)
    if found is None:
        raise ValueError("not an RFC 3339 date-time with an offset")
    day, clock, fraction, zone = found.groups()
    micros = (fraction or "")[:6].ljust(6, "0")
    offset = "+00:00" if zone in ("Z", "z") else zone
    try:
        return datetime.fromisoformat(f"{day}T{clock}.{micros}{offset}").astimezone(UTC)
    except OverflowError as exc:  # (year 1 or 9999 moved past the range by its offset)
        raise ValueError("out of range") from exc


def format_time(moment: datetime) -> str:
    """``moment`` in RFC 3339 UTC with microseconds (the cursor's form)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _query(request: Request) -> tuple[int, datetime | None]:
    params = request.query_params
    raw = params.get("limit", str(DEFAULT_LIMIT))
    limit = int(raw) if raw.isascii() and raw.isdigit() and len(raw) < 5 else 0
    if not 1 <= limit <= MAX_LIMIT:
        raise ApiError("invalid_query", f"limit is a whole number from 1 to {MAX_LIMIT}")
    before = params.get("before")
    if before is None:
        return limit, None
    try:
        return limit, parse_time(before)
    except ValueError:
        raise ApiError(
            "invalid_query", "before is an RFC 3339 date-time with its offset (2026-11-01T12:00:00Z)"
        ) from None


def _item(change: Change) -> dict[str, Any]:
    (old_schema, old_toolset), (new_schema, new_toolset) = change.before, change.after
    return {
        "observed_at": format_time(change.observed_at),
        "attestation_id": change.run_id,
        "before": {"schema_fingerprint": old_schema, "toolset_fingerprint": old_toolset},
        "after": {"schema_fingerprint": new_schema, "toolset_fingerprint": new_toolset},
        "verdict": change.verdict,
        "diff": ToolListDiff.model_validate(change.diff).model_dump(mode="json"),  # (stored without its nulls)
    }


async def server_changes(request: Request) -> Response:
    """``GET /v1/servers/{server_id}/changes?limit=50&before=<RFC 3339>``: see the module docs."""
    services: Services = request.app.state.services
    server_id = server_id_in_path(request)
    limit, before = _query(request)
    history = services.recorder.history
    try:
        with anyio.fail_after(READ_S):
            found = await history.server(server_id)
            changes = await history.changes(server_id, limit, before) if found is not None else []
    except Exception as exc:  # any driver or network fault, or the bound: the database does not answer
        raise unavailable(exc) from exc
    if found is None:
        raise ApiError("server_not_found", "no check of this server is kept here")
    cursor = format_time(changes[-1].observed_at) if len(changes) == limit else None
    body = {"server_id": server_id, "changes": [_item(change) for change in changes], "next": cursor}
    return JSONResponse(body, headers=CACHE)
