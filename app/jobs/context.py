"""What a job handler is given: settings, the service's collaborators, and a way to enqueue.

:class:`JobContext` is built from the same factory as the HTTP service
(:func:`app.checking.services.build_services`), so a job's check is guarded, paced, signed and
kept exactly as a served one; inside ``mcp-sonde serve`` (the embedded mode) it shares the
app's own :class:`~app.checking.services.Services`. Credentials are never part of it: jobs
check public endpoints as anyone would.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from app.attest.signer import Attestor
from app.checking.metrics import Metrics
from app.checking.runner import CheckRunner
from app.checking.services import Services
from app.guard import Resolver
from app.history.store import History
from app.net.dial import Dialler
from app.net.fetch import Fetched, fetch_document
from app.optout.known import KnownOptOuts
from app.queue.handlers import Registry
from app.queue.metrics import JobMetrics
from app.queue.model import Job
from app.queue.shared import shared_only
from app.settings import Settings
from app.store import Store

Enqueue = Callable[[Job], Awaitable[None]]


async def _not_wired(job: Job) -> None:
    raise RuntimeError("this job context has no queue")


@dataclass
class JobContext:
    """The collaborators of job handlers in one process.

    Attributes:
        services: the service's collaborators (the same object as the HTTP app's in the embedded mode).
        registry: the sources and handlers of this process (a probe job's source is found there).
        job_metrics: the engine's counters (on the same registry as the service's).
        enqueue: puts a job on the queue (a retry, a follow-up), ``await ctx.enqueue(job)``.
        checks: single-flight and per-host pacing of probes (:mod:`app.checking.runner`), on the same
            store slots as the HTTP service's, so a host's limits hold across served checks and
            every worker (the shared store only, never a process's own: :mod:`app.queue.shared`); a
            job waits up to ``job_turn_wait_s`` for its host's turn.
        optouts: the opt-out list as this process last read it (:mod:`app.optout.known`).
    """

    services: Services
    registry: Registry
    job_metrics: JobMetrics
    enqueue: Enqueue = field(default=_not_wired)
    checks: CheckRunner = field(init=False)
    optouts: KnownOptOuts = field(init=False)
    shared: Store = field(init=False)

    def __post_init__(self) -> None:
        services = self.services
        paced = services.settings.model_copy(update={"queue_budget_s": services.settings.job_turn_wait_s})
        self.shared = shared_only(services.store)
        self.checks = CheckRunner(self.shared, paced, services.probe_target, services.metrics)
        self.optouts = KnownOptOuts(services.optouts)

    def wire(self, enqueue: Enqueue) -> None:
        """Send the jobs handlers enqueue through ``enqueue`` (the worker's queue, or the embedded one)."""
        self.enqueue = enqueue

    @property
    def settings(self) -> Settings:
        """The settings."""
        return self.services.settings

    @property
    def store(self) -> Store:
        """Locks, slots and markers (Redis when configured, faults read as "not taken":
        :mod:`app.queue.shared`; else in process)."""
        return self.shared

    @property
    def history(self) -> History:
        """The history database (runs, and the tables of the parts that add their own)."""
        return self.services.recorder.history

    @property
    def attestor(self) -> Attestor:
        """Signs results."""
        return self.services.attestor

    @property
    def resolver(self) -> Resolver:
        """The target guard's resolver (tests and drills inject their own)."""
        return self.services.resolver

    @property
    def network_backend(self) -> Dialler | None:
        """The socket backend under the pinned transport (tests pass a loopback one)."""
        return self.services.network_backend

    @property
    def metrics(self) -> Metrics:
        """The service's metrics (history runs, probes, waits)."""
        return self.services.metrics

    async def fetch(self, url: str, *, max_bytes: int, timeout_s: float, redirects: int = 0) -> Fetched:
        """GET a small document through the target guard, pinned to the checked address
        (:func:`app.net.fetch.fetch_document`; its errors as documented there)."""
        return await fetch_document(
            url,
            resolver=self.resolver,
            allow_private=self.settings.allow_private,
            max_bytes=max_bytes,
            timeout_s=timeout_s,
            redirects=redirects,
            ca_bundle=self.settings.ca_bundle,
            network_backend=self.network_backend,
        )
