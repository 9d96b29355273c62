"""``GET /checks``: the check catalogue for people, rendered from ``app/suite/catalogue.yaml``.

The page is the catalogue ``GET /v1/checks`` serves (same id and digest), in words: each check
has an anchor ``#check-<id>`` (a result's check names link to it), its title, group, what it
verifies, and each state it may take with the reason keys that state may carry, each explained
as the result pages explain it (:mod:`app.http.pages.explain`). Nothing is written here that the
catalogue does not say; a check's ``failure_reasons`` of ``probe_reasons`` (any of the probe's
reason keys) is said so and linked to the probe's reasons in the manual.
"""

from __future__ import annotations

from typing import Any, Final

from starlette.requests import Request
from starlette.responses import Response

from app.http.pages.explain import explain
from app.http.pages.render import page
from app.http.pages.views import STATE_WORDS
from app.suite.catalogue import JUDGE_FAILED, PROBE_REASONS, catalogue

#: A check group in words (the catalogue's ``group``).
GROUP_WORDS: Final = {
    "reach": "Reaching the server",
    "proto": "The MCP protocol",
    "sec": "Security",
    "drift": "Changes over time",
}


def _reasons(keys: list[str], check_id: str, unverified: dict[str, str]) -> list[dict[str, str]]:
    return [
        {"key": key, "meaning": unverified.get(key) or explain(key, check_id)} for key in keys if key != PROBE_REASONS
    ]


def _check(entry: dict[str, Any], unverified: dict[str, str]) -> dict[str, Any]:
    check_id = str(entry["id"])
    states = [
        {
            "state": "verified",
            "words": STATE_WORDS["verified"],
            "text": entry["verified"],
            "reasons": [],
            "probe_reasons": False,
        }
    ]
    for state, keys in (("observed_risk", "risk_reasons"), ("failed", "failure_reasons")):
        if state in entry:
            states.append(
                {
                    "state": state,
                    "words": STATE_WORDS[state],
                    "text": entry[state],
                    "reasons": _reasons(list(entry.get(keys, [])), check_id, {}),
                    "probe_reasons": PROBE_REASONS in entry.get(keys, []),
                }
            )
    states.append(
        {
            "state": "unverified",
            "words": STATE_WORDS["unverified"],
            "text": "No verdict could be reached; the reason says why.",
            "reasons": _reasons([*entry.get("unverified", []), JUDGE_FAILED], check_id, unverified),
            "probe_reasons": False,
        }
    )
    return {"id": check_id, "title": entry["title"], "group": entry["group"], "states": states}


def context_of() -> dict[str, Any]:
    """The page's data: the catalogue's id, digest, states and checks by group."""
    document = catalogue()
    unverified: dict[str, str] = document.document["unverified_reasons"]
    checks = [_check(entry, unverified) for entry in document.document["checks"]]
    groups = [
        {"id": group, "words": GROUP_WORDS.get(group, group), "checks": [c for c in checks if c["group"] == group]}
        for group in dict.fromkeys(c["group"] for c in checks)
    ]
    states = [{"state": s, "words": STATE_WORDS[s], "text": t} for s, t in document.document["states"].items()]
    return {"suite": document.suite_id, "sha256": document.sha256, "states": states, "groups": groups}


async def checks_page(request: Request) -> Response:
    """``GET /checks`` (see the module docs)."""
    return page(request, "checks.html", context_of(), headers={"Cache-Control": "public, max-age=3600"})
