"""What scheduled work is made of: jobs, the sources that make them due, and what a probe job found.

A :class:`Job` is one unit of work a worker runs: a probe of one endpoint (``kind="probe"``), a
webhook delivery attempt (``"webhook"``), a registry sync (``"registry_sync"``). Its ``id`` is
chosen when it is enqueued and never changes: a job delivered twice (a worker killed mid-job, a
broker that redelivers) is done once, because every handler is idempotent on ``id`` (a probe's
``id`` is the history's run id, stored once).

A :class:`Source` owns the "when" of one kind of scheduled work (monitors, registry sweeps,
webhook retries). The scheduler asks each source for what is due; a source *claims* what it
returns (moves each item's next time on in the same transaction), so a job is handed out once
even when a standby scheduler takes over. A probe job's source hears what the probe found
through :meth:`Source.finished`, which may be called more than once for one job (redelivery)
and must be idempotent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from app.suite.model import CheckResult

#: Kinds of job a worker runs.
PROBE = "probe"
WEBHOOK = "webhook"
REGISTRY_SYNC = "registry_sync"


@dataclass(frozen=True)
class Job:
    """One unit of work.

    Attributes:
        kind: :data:`PROBE`, :data:`WEBHOOK` or :data:`REGISTRY_SYNC`.
        id: chosen at enqueue; the idempotency key (a probe's run id in the history).
        source: the name of the :class:`Source` that made it due ("monitor", "sweep", ...).
        ref: what it is for in its source (a monitor id, a registry endpoint id, a delivery id).
        url: the endpoint a probe job checks ("" for other kinds).
        due_at: when it was due (UTC).
        data: small JSON-able extras a handler needs (never secrets).
    """

    kind: str
    id: str
    source: str
    ref: str
    due_at: datetime
    url: str = ""
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Outcome:
    """What a probe job found, handed to its source.

    Attributes:
        job: the job.
        status: the check's status class ("ok", "auth", "timeout", ...) or "refused" when the
            target guard refused the URL (nothing was contacted) or "skipped" (opted out).
        reason: the check's reason key, or the refusal's.
        stored: the run is in the history (``False``: not yet, or it never will be).
        result: the served check, when one was made.
        certificate_not_after: when the endpoint's TLS certificate expires, if it was read.
    """

    job: Job
    status: str
    reason: str
    stored: bool
    result: CheckResult | None = None
    certificate_not_after: datetime | None = None


class Source(Protocol):
    """The schedule of one kind of work (see the module docs)."""

    name: str

    async def due(self, now: datetime, limit: int) -> list[Job]:
        """Claim and return up to ``limit`` jobs due at ``now`` (each handed out once)."""
        ...

    async def finished(self, outcome: Outcome) -> None:
        """Hear what a probe job of this source found (idempotent: may come twice)."""
        ...


@runtime_checkable
class Gated(Protocol):
    """A :class:`Source` whose jobs may be withdrawn after they were handed out (a monitor run
    given back or cancelled): a probe job asks :meth:`begin` before it contacts anything."""

    async def begin(self, job: Job) -> bool:
        """Mark ``job`` as begun; ``False`` when it must contact nothing (it is dropped)."""
        ...
