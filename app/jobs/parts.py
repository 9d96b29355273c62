"""Which parts bring scheduled work, and the context every process builds for them.

:data:`PARTS` lists the registration functions (``"module:function"``) of the packages that
add sources and handlers; each is ``register(registry: Registry, ctx: JobContext) -> None``
and is called once per process (worker, scheduler, or ``serve`` in the embedded mode), after
the engine's own :data:`~app.queue.model.PROBE` handler is registered. A package's function adds
its :class:`~app.queue.model.Source` (``registry.add_source``) and the handlers of its kinds
(``registry.add_handler``); it may keep ``ctx`` for its handlers' and sources' use. The setting
``job_parts`` names more of them (a deployment's own, the drills').
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from app.checking.services import Services
from app.jobs.context import JobContext
from app.jobs.probe import probe
from app.queue.handlers import Registry
from app.queue.metrics import JobMetrics
from app.queue.model import PROBE

#: The registration functions of the packages with scheduled work, in order.
PARTS: tuple[str, ...] = ("app.jobs.parts:registry_and_sweeps", "app.jobs.parts:monitors_and_webhooks")

Register = Callable[[Registry, JobContext], None]


def load(name: str) -> Register:
    """The function named ``module:function``."""
    module, _, function = name.partition(":")
    found: Register = getattr(importlib.import_module(module), function)
    return found


def context_for(services: Services, parts: tuple[str, ...] | None = None) -> JobContext:
    """A :class:`JobContext` on ``services`` with every part registered (``parts``: instead of :data:`PARTS`)."""
    registry = Registry()
    ctx = JobContext(services, registry, JobMetrics(services.metrics.registry))
    registry.add_handler(PROBE, probe)
    for name in (*PARTS, *services.settings.job_parts) if parts is None else parts:
        load(name)(registry, ctx)
    return ctx


def registry_and_sweeps(registry: Registry, ctx: JobContext) -> None:
    """The registry mirror's sync and the sweeps of its endpoints (:mod:`app.registry.jobs`), when
    a registry is configured (``MCP_SONDE_REGISTRY_URL``)."""
    if ctx.settings.registry_url is None:
        return
    from app.registry.jobs import register

    register(
        registry,
        engine=ctx.services.optouts.engine,  # (the history database's: every part's tables are there)
        settings=ctx.settings,
        resolver=ctx.resolver,
        network_backend=ctx.network_backend,
    )


def monitors_and_webhooks(registry: Registry, ctx: JobContext) -> None:
    """Monitors' runs and their webhook deliveries (:mod:`app.monitors.jobs`)."""
    from app.monitors.jobs import register

    register(
        registry,
        engine=ctx.services.optouts.engine,
        history=ctx.history,
        ring=ctx.attestor.ring,
        settings=ctx.settings,
        resolver=ctx.resolver,
        network_backend=ctx.network_backend,
    )
