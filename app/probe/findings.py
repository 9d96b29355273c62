"""What a probe has learned so far, filled in step by step and turned into a result at the end.

Policy: facts are recorded as soon as they are known, so a probe that runs out of time or
fails late still reports everything it learned before (server info, version, tools so far).
The first failure decides the status; later steps do not overwrite it.

The fields of a result are declared here, once, in the order it is served: :class:`Probed` and
:class:`Facts` (what a probe records) and :class:`StepTimes` (its timings). :class:`Findings`
is the record a probe fills in, built on them; :class:`app.probe.result.ProbeResult` is the
validated model built on the same classes, with the status and reason the verdict gives it.
Pydantic reads the annotations when the result models are built, so the types they name are
imported only then (a fast CLI start).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from app.probe.classify import Verdict
from app.probe.evidence import Evidence
from app.probe.reasons import status_of

if TYPE_CHECKING:  # the result models are imported when a result is built (a fast CLI start)
    from app.probe.auth import AuthInfo
    from app.probe.result import ProbeResult, ServerInfo, SessionInfo, ToolsInfo
    from app.probe.tls import TlsInfo


class Stopped(Exception):
    """The conversation cannot go on; the failure that stopped it is already recorded."""


#: A list of keys: the dataclasses take the default from ``field()``, pydantic from the annotation.
Keys = Annotated[list[str], Field(default_factory=list)]


@dataclass
class StepTimes:
    """Milliseconds per step as the probe measures them: the fields of :class:`app.probe.result.Timings`."""

    dns_ms: float | None = None
    discover_ms: float | None = None
    sse_connect_ms: float | None = None
    initialize_ms: float | None = None
    initialized_ms: float | None = None
    tools_list_ms: float | None = None
    tools_call_ms: Annotated[float | None, Field(description="The refusal call (tools/call of a made-up name).")] = None
    session_end_ms: float | None = None
    total_ms: float | None = None


@dataclass(kw_only=True)
class Probed:
    """What was probed and when: the first fields of a result."""

    url: str
    checked_at: datetime


@dataclass(kw_only=True)
class Facts(Probed):
    """What a probe records, in the order a result serves it (see :class:`app.probe.result.ProbeResult`;
    its status and reason come between :class:`Probed` and these)."""

    failed_step: str | None = None
    detail: str | None = None
    light: bool = False
    era: Literal["modern", "legacy"] | None = None
    protocol_version: str | None = None
    transport: Literal["streamable_http", "sse"] | None = None
    server: ServerInfo | None = None
    capabilities: dict[str, Any] | None = None
    instructions: str | None = None
    latency_ms: float | None = None
    timings: StepTimes = field(default_factory=StepTimes)
    tools: ToolsInfo | None = None
    session: SessionInfo | None = None
    auth: AuthInfo | None = None
    tls: TlsInfo | None = None
    http_status: int | None = None
    retry_after: int | None = None
    location: str | None = None
    addresses: Keys = field(default_factory=list)
    warnings: Keys = field(default_factory=list)


#: The fields a result takes from the record as they are.
FACTS = tuple(fact.name for fact in fields(Facts))


def name_models(*models: type) -> None:
    """Bind the result models that the annotations of :class:`Facts` name in this module, where
    pydantic looks for them when it builds a model on :class:`Facts` (this module does not import
    them: :mod:`app.probe.result` does, and calls this before it builds one)."""
    globals().update((model.__name__, model) for model in models)


@dataclass(kw_only=True)
class Findings(Facts):
    """Mutable record of one probe: the facts of its result, the verdict that decides it, the step now running."""

    verdict: Verdict | None = None
    current_step: str | None = None
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
        self.detail, self.retry_after, self.location = verdict.detail, verdict.retry_after, verdict.location
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
        """Build the immutable result; a probe with no failure is ``ok``."""
        from app.probe.result import ProbeResult

        reason = "ok" if self.verdict is None else self.verdict.reason
        state = vars(self)
        facts = {name: state[name] for name in FACTS}
        facts["timings"] = vars(self.timings)
        return ProbeResult(**facts, status=status_of(reason), reason=reason)
