"""Where scheduled work is registered: the sources that make jobs due and the handler of each kind.

A part that brings scheduled work (monitors, registry sweeps, webhook deliveries) registers on
one :class:`Registry` through a function of its own, called once per process with the registry
and the :class:`~app.jobs.context.JobContext` (see :mod:`app.jobs.parts`)::

    def register(registry: Registry, ctx: JobContext) -> None:
        registry.add_source(MonitorSource(ctx.history))       # a Source named "monitor"
        registry.add_handler(WEBHOOK, deliver)                 # async def deliver(ctx, job) -> None

A handler is ``async def handler(ctx: JobContext, job: Job) -> None``; it must be idempotent
on ``job.id`` (a job may be delivered twice, :mod:`app.queue.model`). The engine's own handler of
:data:`~app.queue.model.PROBE` is registered by :func:`app.jobs.parts.registry_for`; a probe job's
source hears what the probe found through ``Source.finished``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from app.errors import SondeError
from app.queue.model import Job, Source

if TYPE_CHECKING:
    from app.queue.metrics import JobMetrics
    from app.settings import Settings
    from app.store import Store

#: A handler, given the process's context (its own type: :class:`app.jobs.context.JobContext`).
Handler = Callable[[Any, Job], Awaitable[None]]
Enqueue = Callable[[Job], Awaitable[None]]


class Context(Protocol):
    """What the engine itself needs of the context its handlers are given."""

    registry: Registry
    job_metrics: JobMetrics

    def wire(self, enqueue: Enqueue) -> None:
        """Send the jobs the handlers enqueue (retries, follow-ups) through ``enqueue``."""
        ...

    @property
    def settings(self) -> Settings:
        """The settings."""
        ...

    @property
    def store(self) -> Store:
        """Where a job done is marked."""
        ...


class RegistryError(SondeError):
    """A source or handler registered twice (a wiring fault, found at start-up)."""

    def __init__(self, message: str) -> None:
        super().__init__("jobs_registry", message)


class Registry:
    """The sources and handlers of one process (see the module docs)."""

    def __init__(self) -> None:
        self._sources: dict[str, Source] = {}
        self._handlers: dict[str, Handler] = {}

    def add_source(self, source: Source) -> None:
        """Register ``source`` under its ``name``.

        Raises:
            RegistryError: a source of that name is registered already.
        """
        if source.name in self._sources:
            raise RegistryError(f"a source named {source.name!r} is registered already")
        self._sources[source.name] = source

    def add_handler(self, kind: str, handler: Handler) -> None:
        """Register the handler of jobs of ``kind``.

        Raises:
            RegistryError: ``kind`` has a handler already.
        """
        if kind in self._handlers:
            raise RegistryError(f"jobs of kind {kind!r} have a handler already")
        self._handlers[kind] = handler

    @property
    def sources(self) -> list[Source]:
        """Every registered source, in the order they were added."""
        return list(self._sources.values())

    def source(self, name: str) -> Source | None:
        """The source named ``name``, if one is registered."""
        return self._sources.get(name)

    def handler(self, kind: str) -> Handler | None:
        """The handler of ``kind``, if one is registered."""
        return self._handlers.get(kind)
