"""The in-toto Statement of a full check (in-toto attestation framework, Statement layer v1).

::

    {"_type": "https://in-toto.io/Statement/v1",
     "subject": [{"name": <the normalised URL>, "digest": {"sha256": <hex>}}],
     "predicateType": PREDICATE_TYPE,
     "predicate": {...}}

The subject's digest is the check suite's schema fingerprint (``docs/fingerprints.md``) when
the tool list was read in full; otherwise the SHA-256 of the canonical form of the result as
served (``result_sha256``); and when the result has no canonical form (a server's capabilities
holding an integer beyond I-JSON, say), the SHA-256 of the canonical predicate. The predicate
says which (``subject_digest``).

The predicate (``schemas/check-result-v1.schema.json``, JSON Schema draft 2020-12, every
object closed, ``null`` for "not applicable") holds what was observed and how: the times, the
probe and suite versions, the addresses dialled, the coverage, whether the check ran with the
caller's credentials, every check's state, the fingerprints and the protocol revision. Server
text in it (the server's name, version and title) was cleaned by the probe; lone surrogates are
replaced by U+FFFD so the statement always has a canonical form. A credentialed check's
statement holds no server text at all: ``server`` is ``null`` and ``protocol_version`` is kept
only in the revision form (``YYYY-MM-DD``), so only names, counts, states and digests remain
(a server could echo the caller's credential in any form its text takes).

``predicateType`` is the URI of the predicate's schema in this project's repository: a
versioned name under a path we control, that resolves to the definition.
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from app import __version__
from app.canonical import CanonicalFormError, canonical_bytes, canonical_text
from app.guard.url import without_query

if TYPE_CHECKING:
    from app.suite.model import CheckResult, CheckVerdict

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://github.com/mcp-sonde/mcp-sonde/blob/main/app/attest/schemas/check-result-v1.schema.json"
_SURROGATE = re.compile("[\ud800-\udfff]")
_REVISION = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def rfc3339(moment: datetime) -> str:
    """``moment`` in UTC, RFC 3339 with milliseconds and ``Z``."""
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def _text(value: str | None) -> str | None:
    return None if value is None else _SURROGATE.sub("\ufffd", value)


def endpoint(url: str) -> tuple[str, str | None]:
    """The URL without its query string, and the SHA-256 of the query (``None`` without one).

    A query string often carries an API key; the statement is stored and republished, so it
    names the endpoint without it and binds the query by its digest only.
    """
    query = urlsplit(url).query
    digest = hashlib.sha256(query.encode("utf-8", "surrogatepass")).hexdigest() if query else None
    return without_query(url), digest


def _schema_verdict(result: CheckResult) -> CheckVerdict | None:
    return next((check for check in result.checks if check.id == "schema_fingerprint"), None)


def coverage(result: CheckResult) -> dict[str, str | None]:
    """How much of the server the check saw: ``full``, ``auth_gated`` or ``partial``, with the reason.

    - ``auth_gated``: the server asked for credentials before the tools could be listed
      (status ``auth``); the reason is the probe's reason key.
    - ``full``: the tool list was read to its end and fingerprinted.
    - ``partial``: anything less; the reason is the schema fingerprint check's reason for an
      ``ok`` server (``list_incomplete``, ``not_canonical``), else the probe's reason key.
    """
    if result.status == "auth":
        return {"level": "auth_gated", "reason": result.reason}
    schema = _schema_verdict(result)
    if schema is not None and schema.state == "verified":
        return {"level": "full", "reason": None}
    if result.status == "ok" and schema is not None and schema.reason is not None:
        return {"level": "partial", "reason": schema.reason}
    return {"level": "partial", "reason": result.reason}


def result_digest(served: bytes) -> str | None:
    """SHA-256 of the canonical form of the result as served (its JSON text, without the
    attestation), or ``None`` when it has none."""
    try:
        return hashlib.sha256(canonical_text(served)).hexdigest()
    except CanonicalFormError:
        return None


def predicate(result: CheckResult, served: bytes, finished: datetime) -> dict[str, Any]:
    """The predicate of ``result`` (``served``: its JSON text as served, ``finished``: when the run ended)."""
    started = result.checked_at
    if result.timings.total_ms is not None:
        finished = started + timedelta(milliseconds=result.timings.total_ms)
    private = result.credentialed  # (no server text: see the module docs)
    server = None if private else result.server
    revision = result.protocol_version
    if private and revision is not None and not _REVISION.fullmatch(revision):
        revision = None
    tools = result.tools
    digest = result_digest(served)
    url, query = endpoint(result.url)
    schema = _schema_verdict(result)
    subject_of = "schema_fingerprint" if result.schema_fingerprint else "result" if digest else "predicate"
    return {
        "observed_at": rfc3339(finished),
        "run": {
            "started_at": rfc3339(started),
            "finished_at": rfc3339(finished),
            "duration_ms": round((finished - started).total_seconds() * 1000, 3),
        },
        "probe": {"name": "mcp-sonde", "version": __version__},
        "suite": {"id": result.suite.id, "catalogue_sha256": result.suite.catalogue_sha256},
        "url": url,
        "url_query_sha256": query,
        "addresses": list(result.addresses),
        "coverage": coverage(result),
        "credentialed": result.credentialed,
        "credential_headers": list(result.credential_headers),
        "status": result.status,
        "reason": result.reason,
        "failed_step": result.failed_step,
        "http_status": result.http_status,
        "era": result.era,
        "protocol_version": _text(revision),
        "transport": result.transport,
        "server": None
        if server is None
        else {"name": _text(server.name), "version": _text(server.version), "title": _text(server.title)},
        "tools": None
        if tools is None
        else {"count": tools.count, "complete": schema is not None and schema.state in ("verified", "failed")},
        "checks": [{"id": check.id, "state": check.state, "reason": check.reason} for check in result.checks],
        "fingerprints": {"toolset": result.toolset_fingerprint, "schema": result.schema_fingerprint},
        "subject_digest": subject_of,
        "result_sha256": digest,
    }


def statement(result: CheckResult, served: bytes, finished: datetime) -> dict[str, Any]:
    """The in-toto Statement of ``result`` (see the module docs)."""
    body = predicate(result, served, finished)
    if result.schema_fingerprint:
        digest = result.schema_fingerprint
    elif body["result_sha256"]:
        digest = body["result_sha256"]
    else:
        digest = hashlib.sha256(canonical_bytes(body)).hexdigest()
    return {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": body["url"], "digest": {"sha256": digest}}],
        "predicateType": PREDICATE_TYPE,
        "predicate": body,
    }
