"""``/servers/{server_id}``: a server's page, from the history kept here (the server is never contacted).

What it shows: the latest signed result (status, reason in words, each check's state, from
the stored envelope's predicate), 90 days of uptime as a bar strip (:mod:`app.http.pages.uptime`) with
the 7/30/90-day rates, latency percentiles, the tools of the newest complete tool list with each
tool's changes (breaking ones marked), the uptime badge with its Markdown and HTML snippets,
and the attestation with how to verify it. As the API (:mod:`app.http.routes.servers`): an id
that is not 24 hex characters, or of a server never checked here, is ``404 server_not_found``;
a database that does not answer is ``503 history_unavailable``; both are the HTML error page.
"""

from __future__ import annotations

import base64
import json
from collections import defaultdict
from collections.abc import Awaitable
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import Response

from app.checking import links
from app.checking.errors import ApiError
from app.checking.services import Services
from app.errors import TargetRefused
from app.guard import check_url
from app.history import report
from app.history.reading import HistoryRead
from app.history.records import Change, Toolset
from app.http.pages import units
from app.http.pages.render import error_page, page
from app.http.pages.uptime import DAYS, strip
from app.http.pages.views import result_view
from app.http.routes.directory import entry_json, identity_json
from app.http.routes.ops import services_of
from app.http.routes.paths import READ_S, server_id_in_path, unavailable

#: Tool-list changes read for the page (newest first).
CHANGES = 50


async def server_page(request: Request) -> Response:
    """``GET /servers/{server_id}`` (see the module docs)."""
    services = services_of(request)
    try:
        server_id = server_id_in_path(request)
        context = await _context(services, server_id)
    except ApiError as exc:
        return error_page(request, exc)
    return page(request, "server.html", context, headers={"Cache-Control": "public, max-age=60"})


async def _context(services: Services, server_id: str) -> dict[str, Any]:
    history = services.recorder.history
    now = datetime.now(UTC)
    since = (now - timedelta(days=DAYS - 1)).replace(hour=0, minute=0, second=0, microsecond=0)
    found: dict[str, Any] = {}

    async def keep(name: str, read: Awaitable[Any]) -> None:
        found[name] = await read

    try:
        with anyio.fail_after(READ_S):
            read = await history.history(server_id, since)
            if read is None:
                raise ApiError("server_not_found", "no check of this server is kept here")
            latest = read.server.latest_attestation_id
            # The rest does not depend on each other: read side by side, each on a connection of its own.
            async with anyio.create_task_group() as reads:
                reads.start_soon(keep, "changes", history.changes(server_id, CHANGES))
                reads.start_soon(keep, "toolset", history.toolset(server_id=server_id))
                reads.start_soon(keep, "envelope", history.envelope(latest) if latest is not None else _none())
                reads.start_soon(keep, "listed", services.directory.listing(server_id))
    except ApiError:
        raise
    except Exception as exc:  # any driver or network fault, or the bound: the database does not answer
        raise unavailable(exc) from exc
    changes, toolset, envelope, listed = found["changes"], found["toolset"], found["envelope"], found["listed"]
    base = services.settings.public_base_url
    return {
        "server_id": server_id,
        "url": read.server.url,
        "host": listed.listing.host if listed is not None else read.server.host,
        "first_seen": _time(read.server.first_seen),
        "last_seen": _time(read.server.last_seen),
        "latest": _latest(envelope),
        "attestation_id": latest,
        "uptime": _rates(read, now),
        "strip": strip(read.days, now.date()),
        "latency": read.window.latency,
        "reached": read.window.reached,
        "status_changes": read.window.status_changes[-10:][::-1],
        "tools": _tools(toolset, changes),
        "removed": _removed(toolset, changes),
        "changes": [_change(change) for change in changes],
        "badge": _badge(base, server_id, read.server.url),
        "base_url": base,
        "keys_private": _needs_private(base),
        "identity": identity_json(listed.listing) if listed is not None else None,
        "registry_entries": [entry_json(entry) for entry in listed.entries] if listed is not None else [],
        "category": listed.listing.category if listed is not None else None,
    }


async def _none() -> None:
    return None


def _time(moment: datetime) -> str:
    return units.moment(moment)


def _rates(read: HistoryRead, now: datetime) -> list[dict[str, Any]]:
    rates = report.rates(read.days, now.date())
    return [{"window": window, **rates[f"{window}d"]} for window in report.WINDOWS]


def _latest(envelope: bytes | None) -> dict[str, Any] | None:
    """The latest run as its signed predicate says (``None`` when the envelope is not kept or unreadable)."""
    if envelope is None:
        return None
    try:
        statement = json.loads(base64.b64decode(json.loads(envelope)["payload"]))
        predicate = statement["predicate"]
    except (ValueError, KeyError, TypeError):
        return None
    return result_view(predicate) if isinstance(predicate, dict) else None


def _tool_changes(changes: list[Change]) -> dict[str, list[dict[str, Any]]]:
    """Each tool name's changes, newest first."""
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for change in changes:
        for tool in change.diff.get("tools") or ():
            if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
                continue
            hint = tool.get("hint")
            hint = hint if isinstance(hint, dict) else {}
            out[tool["name"]].append(
                {
                    "observed_at": _time(change.observed_at),
                    "change": str(tool.get("change", "")).replace("_", " "),
                    "verdict": str(tool.get("verdict", "")),
                    "breaking": tool.get("verdict") == "breaking",
                    "renamed_from": hint.get("renamed_from") if isinstance(hint.get("renamed_from"), str) else None,
                    "attestation_id": change.run_id,
                }
            )
    return out


def _tools(toolset: Toolset | None, changes: list[Change]) -> list[dict[str, Any]] | None:
    """The newest complete tool list, each tool with its changes (``None``: no complete list kept)."""
    if toolset is None:
        return None
    history = _tool_changes(changes)
    tools = []
    for definition in toolset.definitions:
        name = str(definition.get("name", ""))
        title, description = definition.get("title"), definition.get("description")
        tools.append(
            {
                "name": name,
                "title": title if isinstance(title, str) else None,
                "description": description if isinstance(description, str) else None,
                "changes": history.get(name, []),
            }
        )
    return sorted(tools, key=lambda tool: tool["name"])


def _removed(toolset: Toolset | None, changes: list[Change]) -> list[dict[str, Any]]:
    """Tools the changes name that the newest list no longer has, each with its changes."""
    current = {str(definition.get("name", "")) for definition in toolset.definitions} if toolset else set()
    return [
        {"name": name, "changes": log} for name, log in sorted(_tool_changes(changes).items()) if name not in current
    ]


def _change(change: Change) -> dict[str, Any]:
    counts = change.diff.get("counts")
    counts = counts if isinstance(counts, dict) else {}
    return {
        "observed_at": _time(change.observed_at),
        "verdict": change.verdict,
        "breaking": change.verdict == "breaking",
        "counts": {key: int(counts.get(key, 0)) for key in ("added", "removed", "renamed", "changed")},
        "attestation_id": change.run_id,
    }


def _needs_private(base: str) -> bool:
    """Whether ``mcp-sonde verify`` needs ``--allow-private`` to fetch this service's keys (a base URL
    the target guard refuses, such as a loopback one under the development switch)."""
    try:
        check_url(f"{base}/.well-known/mcp-sonde-keys.json")
    except TargetRefused:
        return True
    return False


def _badge(base: str, server_id: str, url: str) -> dict[str, str]:
    """The uptime badge's image URL (absolute, and relative for this page) and its snippets."""
    query = links.badge_query(url)
    image = f"{base}/badge/mcp/uptime{query}"
    target = links.server_page(base, server_id)
    return {
        "image": image,
        "preview": f"/badge/mcp/uptime{query}",
        "markdown": links.uptime_badge_markdown(base, url),
        "html": f'<a href="{target}"><img src="{image}" alt="MCP uptime"></a>',
    }
