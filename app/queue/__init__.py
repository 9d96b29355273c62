"""Scheduled work: monitors, registry syncs and sweeps, and webhook deliveries, run by workers
through a job queue (see :mod:`app.queue.model`)."""

from __future__ import annotations

from app.queue.model import PROBE, REGISTRY_SYNC, WEBHOOK, Job, Outcome, Source

__all__ = ["PROBE", "REGISTRY_SYNC", "WEBHOOK", "Job", "Outcome", "Source"]
