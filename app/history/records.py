"""What the history store takes and gives: plain frozen records, no SQL."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from app.guard.url import without_query

SERVER_ID_HEX = 24


def server_id_of(url: str) -> str:
    """The public id of the server at ``url``: the first 24 hex characters of the SHA-256 of its
    URL without the query string."""
    return hashlib.sha256(without_query(url).encode("utf-8", "surrogatepass")).hexdigest()[:SERVER_ID_HEX]


@dataclass(frozen=True)
class Run:
    """One served full check, as the service hands it to the store.

    Attributes:
        run_id: chosen by the caller (a redelivered run with the same id is stored once).
        url: the normalised URL probed (its query string is dropped here).
        host: the host name.
        observed_at: when the observation was final.
        status, reason, protocol_version, transport, latency_ms, total_ms: the result's facts.
        addresses: the addresses dialled.
        tools: the cleaned tool definitions of a list read in full, else ``None``.
        schema_fingerprint, toolset_fingerprint: of that list.
        result: the served result's JSON text (without tool definitions and attestation).
        attestation_id, envelope: the signed statement.
        credentialed: the check ran with the caller's credentials (such a run is never stored).
    """

    run_id: str
    url: str
    host: str
    observed_at: datetime
    status: str
    reason: str
    protocol_version: str | None
    transport: str | None
    latency_ms: float | None
    total_ms: float | None
    addresses: tuple[str, ...]
    tools: tuple[dict[str, Any], ...] | None
    schema_fingerprint: str | None
    toolset_fingerprint: str | None
    result: bytes
    attestation_id: str
    envelope: bytes
    credentialed: bool = False


@dataclass(frozen=True)
class Day:
    """One UTC day of a server: its runs by what they said of its uptime."""

    day: date
    up: int
    gated: int
    down: int
    left_out: int


@dataclass(frozen=True)
class ServerSummary:
    """A stored server: identity, when seen, its latest run."""

    server_id: str
    url: str
    host: str
    addresses: tuple[str, ...]
    first_seen: datetime
    last_seen: datetime
    latest_status: str | None
    latest_run_id: str | None
    latest_attestation_id: str | None = None


@dataclass(frozen=True)
class Toolset:
    """A stored tool list: its cleaned definitions and fingerprints, and the run it was read in
    (when looked up by run)."""

    definitions: tuple[dict[str, Any], ...]
    definitions_sha256: str
    schema_fingerprint: str | None
    toolset_fingerprint: str | None
    run_id: str | None = None


@dataclass(frozen=True)
class Change:
    """A change of a server's tool list between two consecutive runs that read it in full.

    Attributes:
        observed_at, run_id: of the run that saw the new list.
        before, after: the fingerprints ``(schema, toolset)`` of the old and new list.
        verdict: of the whole list (``breaking``, ``unknown``, ``compatible``; see docs/drift.md).
        diff: the :class:`app.drift.ToolListDiff`, as JSON.
    """

    observed_at: datetime
    run_id: str
    before: tuple[str | None, str | None]
    after: tuple[str | None, str | None]
    verdict: str
    diff: dict[str, Any]


def utc(moment: datetime) -> datetime:
    """``moment`` as an aware UTC time (SQLite gives back naive times, which are UTC here)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
