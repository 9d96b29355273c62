"""How monitors and webhooks join the job engine: one call registers their sources and handler.

:func:`register` adds to the engine's registry the ``monitor`` source (probe jobs of due
monitor runs; the engine's probe handler runs them and hands the outcome back through
:meth:`~app.monitors.source.MonitorSource.finished`), the ``webhook`` source (due delivery
attempts) and the handler of ``webhook`` jobs (:class:`app.webhooks.deliver.WebhookDeliverer`).
Both sources and the handler need nothing but the database, the history, the instance's key
ring (webhook secrets derive from its keys), the settings and the resolver.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncEngine

from app.attest.keyring import KeyRing
from app.guard import Resolver
from app.history.store import History
from app.monitors.source import MonitorSource
from app.monitors.store import MonitorStore
from app.net.dial import Dialler
from app.queue.model import WEBHOOK, Job, Source
from app.settings import Settings
from app.webhooks.deliver import WebhookDeliverer
from app.webhooks.secrets import WebhookSecrets
from app.webhooks.source import WebhookSource
from app.webhooks.store import DeliveryStore

Handler = Callable[[Any, Job], Awaitable[None]]


class Registry(Protocol):
    """What :func:`register` needs of the engine's registry."""

    def add_source(self, source: Source) -> None:
        """Schedule ``source``'s due jobs."""
        ...

    def add_handler(self, kind: str, handler: Handler) -> None:
        """Run jobs of ``kind`` with ``handler(ctx, job)``."""
        ...


@dataclass(frozen=True)
class Registered:
    """What :func:`register` added."""

    monitors: MonitorSource
    webhooks: WebhookSource
    deliver: WebhookDeliverer


def register(
    registry: Registry,
    *,
    engine: AsyncEngine,
    history: History,
    ring: KeyRing,
    settings: Settings,
    resolver: Resolver,
    network_backend: Dialler | None = None,
) -> Registered:
    """Add the ``monitor`` and ``webhook`` sources and the ``webhook`` handler to ``registry``.

    Args:
        registry: the engine's registry (``add_source``, ``add_handler``).
        engine: the history database's engine (monitors and deliveries live beside the runs).
        history: the history store the probe handler records runs in.
        ring: the instance's key ring.
        settings: the settings.
        resolver: the resolver the target guard asks.
        network_backend: the socket backend under the pin table (tests only).
    """
    deliveries = DeliveryStore(engine)
    made = Registered(
        monitors=MonitorSource(MonitorStore(engine, settings.monitor_run_lost_s), history, settings),
        webhooks=WebhookSource(deliveries, settings),
        deliver=WebhookDeliverer(deliveries, WebhookSecrets(ring), settings, resolver, network_backend),
    )
    registry.add_source(made.monitors)
    registry.add_source(made.webhooks)
    registry.add_handler(WEBHOOK, made.deliver)
    return made
