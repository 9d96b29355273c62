"""The probe result: what one live check of an MCP endpoint found.

All text that came from the server is cleaned (:mod:`app.probe.text`) before it lands here,
and every result says ``untrusted_content: true``: consumers must treat server names, tool
names and instructions as data, never as instructions or markup.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.probe.auth import AuthInfo
from app.probe.findings import Facts, Probed, StepTimes, name_models
from app.probe.reasons import REASONS, Status
from app.probe.tls import TlsInfo


class ServerInfo(BaseModel):
    """``serverInfo`` (MCP ``Implementation``): from ``initialize`` or the ``server/discover`` ``_meta``."""

    model_config = ConfigDict(extra="forbid")
    name: str | None = None
    version: str | None = None
    title: str | None = None


class ToolsInfo(BaseModel):
    """What ``tools/list`` returned over the pages read.

    Attributes:
        count: valid tools seen (objects with a string ``name``).
        names: the first 100 tool names, in server order.
        pages_read: pages answered.
        more_pages: the last page read still had a ``nextCursor`` (page limit reached).
        cursor_repeated: the server sent a ``nextCursor`` it had already sent.
        invalid_entries: entries that were not tool objects (null, missing name, ...).
        truncated: a page was larger than the reply cap; the tools before the cut are counted.
        error_code: JSON-RPC error code if ``tools/list`` answered an error.
        duplicate_entries: entries naming a tool already listed (each tool is counted once).
    """

    model_config = ConfigDict(extra="forbid")
    count: int = 0
    names: list[str] = Field(default_factory=list)
    pages_read: int = 0
    more_pages: bool = False
    cursor_repeated: bool = False
    invalid_entries: int = 0
    truncated: bool = False
    error_code: int | None = None
    duplicate_entries: int = 0


class SessionInfo(BaseModel):
    """The legacy-era session: whether ``Mcp-Session-Id`` was issued and how ending it went."""

    model_config = ConfigDict(extra="forbid")
    issued: bool = False
    end_status: int | None = Field(default=None, description="HTTP status of the closing DELETE, if sent.")


class Timings(BaseModel, StepTimes):
    """Milliseconds spent per step; ``None`` for steps not run."""

    model_config = ConfigDict(extra="forbid")


name_models(ServerInfo, ToolsInfo, SessionInfo, AuthInfo, TlsInfo)


@dataclass(kw_only=True)
class Decided(Probed):
    """The fields a result takes from the verdict; served after :class:`~app.probe.findings.Probed`
    and before :class:`~app.probe.findings.Facts`, where the order of :class:`ProbeResult`'s bases
    puts them."""

    status: Status
    reason: str


class ProbeResult(BaseModel, Facts, Decided):
    """One live check of an MCP endpoint.

    Attributes:
        url: the normalised URL that was probed.
        checked_at: when the probe started (UTC).
        status: the status class (see :mod:`app.probe.reasons`).
        reason: a key from :data:`app.probe.reasons.REASONS` that belongs to ``status``.
        failed_step: the step that decided a non-ok status (``dns``, ``server/discover``,
            ``initialize``, ``tools/list``), if any.
        detail: a short, cleaned message from the server (a JSON-RPC error message), if any.
        era: ``modern`` (2026-07-28, no handshake) or ``legacy`` (``initialize`` handshake).
        protocol_version: the version the server answered.
        transport: ``streamable_http`` or ``sse`` (legacy HTTP+SSE, 2024-11-05).
        latency_ms: duration of the handshake exchange (``server/discover`` or ``initialize``).
        http_status: the HTTP status of the exchange that decided the result.
        retry_after: seconds from a 429/503 ``Retry-After``.
        location: the ``Location`` of a redirect (never followed).
        auth: the challenge and protected resource metadata, for ``auth`` results.
        tls: certificate facts, for every https probe that reached a TLS handshake.
        addresses: the addresses the host resolved to (the only ones dialled).
        warnings: stable keys for oddities that did not decide the status.
    """

    model_config = ConfigDict(extra="forbid")

    # the fields are those of the bases, in their order; the record's StepTimes are served as Timings
    timings: Timings = Field(default_factory=Timings)
    untrusted_content: Literal[True] = True

    @model_validator(mode="after")
    def _reason_belongs_to_status(self) -> ProbeResult:
        entry = REASONS.get(self.reason)
        if entry is None or entry[0] != self.status:
            raise ValueError(f"reason {self.reason!r} does not belong to status {self.status!r}")
        return self
