"""What a verified statement says, for people (:func:`describe`) and programs (:func:`facts`).

The server's own text (its name, version and title, its protocol version) is untrusted: it is
printed as data, never as terminal markup. In the summary every character that is not printable
(controls C0 and C1, format characters such as bidirectional overrides, line separators) is
written as ``\\uXXXX`` (``\\UXXXXXXXX`` beyond the BMP) and a backslash as ``\\\\``, so an escape
in the text cannot pass for an escaped character; the JSON form (:func:`to_json`) writes the
same characters as JSON escapes, which JSON itself would let through raw.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from app.attest.verify.verifier import Verified


def _time(value: Any) -> str | None:
    return None if value is None else value.isoformat().replace("+00:00", "Z")


def facts(verified: Verified) -> dict[str, Any]:
    """The verdict and the statement's facts as JSON-ready data."""
    predicate = verified.predicate
    return {
        "verified": True,
        "keys": [
            {"keyid": key.keyid, "valid_from": _time(key.valid_from), "valid_until": _time(key.valid_until)}
            for key in verified.keys
        ],
        "subject": verified.statement["subject"][0],
        "url": predicate["url"],
        "url_query_sha256": predicate["url_query_sha256"],
        "observed_at": predicate["observed_at"],
        "status": predicate["status"],
        "reason": predicate["reason"],
        "server": predicate["server"],
        "protocol_version": predicate["protocol_version"],
        "transport": predicate["transport"],
        "coverage": predicate["coverage"],
        "credentialed": predicate["credentialed"],
        "credential_headers": predicate["credential_headers"],
        "checks": predicate["checks"],
        "result_checked": verified.result_checked,
        "probe": predicate["probe"],
    }


def _escaped(ch: str) -> str:
    if ch == "\\":
        return "\\\\"
    if ch.isprintable():
        return ch
    return f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}"


def _safe(text: object) -> str:
    return "".join(_escaped(ch) for ch in str(text))


def _quoted(text: str) -> str:
    return '"' + _safe(text).replace('"', '\\"') + '"'


def to_json(report: dict[str, Any]) -> str:
    """``report`` as indented JSON in which no character is unprintable but the line breaks
    between members (see the module docs): such a character can only stand in a string, where
    its JSON escape means the same."""
    text = json.dumps(report, indent=2, ensure_ascii=False)
    return "".join(ch if ch == "\n" or ch.isprintable() else json.dumps(ch)[1:-1] for ch in text)


def _server_info(server: dict[str, str | None] | None) -> list[str]:
    if server is None:
        return []
    parts = [
        f"{label} {_quoted(server[label] or '')}" for label in ("name", "version", "title") if server[label] is not None
    ]
    return ["server info:  " + (", ".join(parts) if parts else "(none given)") + "  (the server's own words)"]


def describe(report: dict[str, Any]) -> str:
    """A few lines a person reads (see the module docs)."""
    keys = ", ".join(key["keyid"] for key in report["keys"])
    states = Counter(check["state"] for check in report["checks"])
    coverage = report["coverage"]
    lines = [
        f"VERIFIED: signed by key {keys} (valid at observed_at, not revoked)",
        f"server:       {_safe(report['url'])}"
        + ("  (query string bound by its SHA-256)" if report["url_query_sha256"] else ""),
        *_server_info(report["server"]),
        f"observed at:  {report['observed_at']} by {report['probe']['name']} {report['probe']['version']}",
        f"status:       {report['status']} ({report['reason']})"
        + (f", {_safe(report['protocol_version'])} over {report['transport']}" if report["protocol_version"] else ""),
        f"coverage:     {coverage['level']}" + (f" ({coverage['reason']})" if coverage["reason"] else ""),
    ]
    if report["credentialed"]:
        names = ", ".join(_safe(name) for name in report["credential_headers"])
        lines.append(f"credentialed: YES, the check ran with the caller's own credentials ({names}): "
                     "what it saw may be visible to that caller only")  # fmt: skip
    else:
        lines.append("credentialed: no")
    lines.append("checks:       " + ", ".join(f"{count} {state}" for state, count in sorted(states.items())))
    for check in report["checks"]:
        if check["state"] != "verified":
            lines.append(f"  {check['id']}: {check['state']}" + (f" ({check['reason']})" if check["reason"] else ""))
    if report["result_checked"]:
        lines.append("result:       the check answer beside the envelope is the one signed")
    return "\n".join(lines)
