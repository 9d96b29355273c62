"""A registration function for the embedded-mode test: its source hands out :data:`JOBS` once."""

from __future__ import annotations

from app.jobs.context import JobContext
from app.queue.handlers import Registry
from app.queue.model import Job
from tests.jobs.conftest import ListSource

JOBS: list[Job] = []
SOURCE = ListSource(name="embedded")


def register(registry: Registry, ctx: JobContext) -> None:
    """Add :data:`SOURCE`, loaded with :data:`JOBS`."""
    SOURCE.jobs = list(JOBS)
    registry.add_source(SOURCE)
