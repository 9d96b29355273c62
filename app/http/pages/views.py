"""Plain data for the templates, built from a served check result (its JSON) and stored rows.

Templates get dicts and lists of strings and numbers with every key present (they render under
``StrictUndefined``), never the models themselves; server text stays text (escaped on output).
"""

from __future__ import annotations

import json
from typing import Any, Final

from app.http.pages.explain import check_title, explain

#: A check state in words.
STATE_WORDS: Final = {
    "verified": "Verified",
    "failed": "Failed",
    "observed_risk": "Risk observed",
    "unverified": "Not verified",
}
#: A result's status class in words.
STATUS_WORDS: Final = {
    "ok": "Up: answers MCP",
    "auth": "Up, behind sign-in",
    "not_found": "Not found",
    "client_error": "Refused the request",
    "server_error": "Server error",
    "redirect": "Redirects elsewhere",
    "not_mcp": "Not an MCP server",
    "timeout": "Timed out",
    "tls": "Certificate problem",
    "dns": "Host name problem",
    "unreachable": "Unreachable",
}
#: Whether a status class is up or down, and the sign shown beside its word (so colour is
#: never the only cue: WCAG 2.2, 1.4.1 Use of Color).
STANDING: Final = {"ok": "up", "auth": "up"}
CUES: Final = {"up": "✓", "down": "✕", "none": "?"}


def standing(status: str | None) -> str:
    """``up``, ``down`` or ``none`` (never checked) for a status class."""
    return "none" if not status else STANDING.get(status, "down")


#: The most of a check's evidence a result shows (as JSON text; the signed answer has it whole).
EVIDENCE_CHARS: Final = 4000
#: The answer's ``links`` a result shows, each in words.
LINK_WORDS: Final = (
    ("server", "Server page"),
    ("history", "History (JSON)"),
    ("badge_svg", "Status badge (SVG)"),
    ("uptime_badge_svg", "Uptime badge (SVG)"),
)


def _evidence(value: object) -> str | None:
    if not value:
        return None
    text = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= EVIDENCE_CHARS else text[:EVIDENCE_CHARS] + "\n…"


def _links(document: dict[str, Any]) -> dict[str, Any] | None:
    links = document.get("links")
    if not isinstance(links, dict):
        return None
    shown = [(words, links[key]) for key, words in LINK_WORDS if isinstance(links.get(key), str)]
    markdown = links.get("badge_markdown")
    uptime = links.get("uptime_badge_markdown")
    return {
        "shown": shown,
        "badge_markdown": markdown if isinstance(markdown, str) else None,
        "uptime_badge_markdown": uptime if isinstance(uptime, str) else None,
    }


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def server_of(document: dict[str, Any]) -> dict[str, str | None]:
    """``serverInfo`` as name, title and version (each ``None`` when not given)."""
    info = document.get("server")
    info = info if isinstance(info, dict) else {}
    return {"name": _text(info.get("name")), "title": _text(info.get("title")), "version": _text(info.get("version"))}


def checks_of(document: dict[str, Any]) -> list[dict[str, Any]]:
    """Each check's id, title, state (and in words), reason key and its meaning."""
    out = []
    for verdict in document.get("checks") or ():
        if not isinstance(verdict, dict):
            continue
        check_id, state, reason = str(verdict.get("id")), str(verdict.get("state")), verdict.get("reason")
        reason = reason if isinstance(reason, str) else None
        out.append(
            {
                "id": check_id,
                "title": check_title(check_id),
                "state": state,
                "state_words": STATE_WORDS.get(state, state),
                "reason": reason,
                "meaning": explain(reason, check_id),
                "evidence": _evidence(verdict.get("evidence")),
            }
        )
    return out


def result_view(document: dict[str, Any]) -> dict[str, Any]:
    """A served check result (its JSON object) for ``_result.html``."""
    status, reason = str(document.get("status")), str(document.get("reason"))
    tools = document.get("tools") if isinstance(document.get("tools"), dict) else None
    latency = document.get("latency_ms")
    return {
        "url": str(document.get("url")),
        "status": status,
        "status_words": STATUS_WORDS.get(status, status),
        "reason": reason,
        "meaning": explain(reason),
        "checked_at": str(document.get("checked_at")),
        "protocol_version": _text(document.get("protocol_version")),
        "transport": _text(document.get("transport")),
        "latency_ms": float(latency) if isinstance(latency, int | float) else None,
        "http_status": document.get("http_status") if isinstance(document.get("http_status"), int) else None,
        "detail": _text(document.get("detail")),
        "server": server_of(document),
        "tool_count": tools.get("count") if tools is not None and isinstance(tools.get("count"), int) else None,
        "tool_names": [str(name) for name in (tools or {}).get("names") or ()][:100],
        "checks": checks_of(document),
        "attestation_id": _text(document.get("attestation_id")),
        "links": _links(document),
    }
