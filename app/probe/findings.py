"""What a probe has learned so far, filled in step by step and turned into a result at the end.

Policy: facts are recorded as soon as they are known, so a probe that runs out of time or
fails late still reports everything it learned before (server info, version, tools so far).
The first failure decides the status; later steps do not overwrite it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from app.probe.classify import Verdict
from app.probe.evidence import Evidence
from app.probe.reasons import status_of

if TYPE_CHECKING:  # the result models are imported when a result is built (a fast CLI start)
    from app.probe.auth import AuthInfo
    from app.probe.result import ProbeResult, ServerInfo, SessionInfo, ToolsInfo
    from app.probe.tls import TlsInfo


class Stopped(Exception):
    """The conversation cannot go on; the failure that stopped it is already recorded."""


@dataclass
class StepTimes:
    """Milliseconds per step as the probe measures them (see :class:`app.probe.result.Timings`)."""

    dns_ms: float | None = None
    discover_ms: float | None = None
    sse_connect_ms: float | None = None
    initialize_ms: float | None = None
    initialized_ms: float | None = None
    tools_list_ms: float | None = None
    tools_call_ms: float | None = None
    session_end_ms: float | None = None
    total_ms: float | None = None


@dataclass
class Findings:
    """Mutable record of one probe; see :class:`app.probe.result.ProbeResult` for the fields."""

    url: str
    checked_at: datetime
    light: bool
    verdict: Verdict | None = None
    failed_step: str | None = None
    current_step: str | None = None
    era: Literal["modern", "legacy"] | None = None
    protocol_version: str | None = None
    transport: Literal["streamable_http", "sse"] | None = None
    server: ServerInfo | None = None
    capabilities: dict[str, Any] | None = None
    instructions: str | None = None
    latency_ms: float | None = None
    http_status: int | None = None
    tools: ToolsInfo | None = None
    session: SessionInfo | None = None
    auth: AuthInfo | None = None
    tls: TlsInfo | None = None
    addresses: list[str] = field(default_factory=list)
    timings: StepTimes = field(default_factory=StepTimes)
    warnings: list[str] = field(default_factory=list)
    evidence: Evidence = field(default_factory=Evidence)
    observer: Callable[[str], None] | None = None

    def step(self, name: str) -> None:
        """Record the step now running and tell the observer (progress display), if any."""
        self.current_step = name
        if self.observer is not None:
            self.observer(name)

    def fail(self, step: str, verdict: Verdict, http_status: int | None = None, *, supersede: bool = False) -> None:
        """Record the deciding failure (the first one wins, unless ``supersede``: a failure of an
        earlier step that was overlapped with a later one decides, as if it had been awaited)."""
        if self.verdict is not None and not supersede:
            return
        self.verdict = verdict
        self.failed_step = step
        if http_status is not None:
            self.http_status = http_status

    def warn(self, key: str) -> None:
        """Record an oddity that does not decide the status (each key once)."""
        if key not in self.warnings:
            self.warnings.append(key)

    @property
    def failed(self) -> bool:
        """``True`` once a failure was recorded."""
        return self.verdict is not None

    def to_result(self) -> ProbeResult:
        """Build the immutable result; a probe with no failure is ``ok``.

        Every result field that a probe learns step by step has a field of the same name here;
        the verdict supplies the rest.
        """
        from app.probe.result import ProbeResult

        verdict = self.verdict or Verdict("ok")
        learned = {name: getattr(self, name) for name in ProbeResult.model_fields if hasattr(self, name)}
        learned["timings"] = asdict(self.timings)
        return ProbeResult(
            **learned,
            status=status_of(verdict.reason),
            reason=verdict.reason,
            detail=verdict.detail,
            retry_after=verdict.retry_after,
            location=verdict.location,
        )
