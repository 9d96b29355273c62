"""The engine's counters, on the service's Prometheus registry (so ``/metrics`` of ``serve``
shows them in the embedded mode; a worker's are in its log when it stops).

- ``mcp_sonde_jobs_total{kind,outcome}``: jobs a worker took: ``done``, ``already_done`` (a
  redelivery of a finished job, not run again), ``requeued`` (its host's turn did not come:
  back on the queue), ``failed`` (the handler raised; logged), ``no_handler``, ``malformed``.
- ``mcp_sonde_jobs_enqueued_total{source}``: jobs the scheduler put on the queue.
- ``mcp_sonde_scheduler_active``: 1 while this process holds the scheduler's lock.

Kinds and sources are the registered ones (a closed set in code); anything else is ``other``.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge

from app.queue.model import PROBE, REGISTRY_SYNC, WEBHOOK

KINDS = frozenset({PROBE, WEBHOOK, REGISTRY_SYNC})
OUTCOMES = ("done", "already_done", "requeued", "failed", "no_handler", "malformed")


class JobMetrics:
    """See the module docs."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.jobs = Counter("mcp_sonde_jobs", "Jobs a worker took, by outcome.", ["kind", "outcome"], registry=registry)
        self.enqueued = Counter("mcp_sonde_jobs_enqueued", "Jobs enqueued, by source.", ["source"], registry=registry)
        self.active = Gauge("mcp_sonde_scheduler_active", "1 while this process is the active scheduler.",
                            registry=registry)  # fmt: skip
        self.counts: dict[str, int] = {}

    def job(self, kind: str, outcome: str) -> None:
        """Count one job taken."""
        self.jobs.labels(kind=kind if kind in KINDS else "other", outcome=outcome).inc()
        self.counts[outcome] = self.counts.get(outcome, 0) + 1
