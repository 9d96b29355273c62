"""The sweep drill's own host names: a resolver answering ``127.0.0.1`` for ``*.sweep.test``.

Loaded into the drill's ``mcp-sonde worker`` processes through the ``job_parts`` setting
(``bench.sweep_names:register``): it puts :class:`DrillResolver` in place of the system
resolver for the probes of that process (``.test`` is reserved for testing, RFC 2606 section
2, so no real name is ever shadowed). The target guard still checks every answer
(``allow_private`` lets loopback through, as the drill needs); any other name fails as
NXDOMAIN, so the drill never sends a packet off this machine.
"""

from __future__ import annotations

import ipaddress

from app.guard import IPAddress, ResolutionFailed
from app.jobs.context import JobContext
from app.queue.handlers import Registry

SUFFIX = ".sweep.test"
LOOPBACK = ipaddress.ip_address("127.0.0.1")


class DrillResolver:
    """A :class:`app.guard.Resolver`: ``*.sweep.test`` is ``127.0.0.1``, nothing else resolves."""

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        """``[127.0.0.1]`` for a drill name."""
        if host.lower().rstrip(".").endswith(SUFFIX):
            return [LOOPBACK]
        raise ResolutionFailed("dns_nxdomain", f"{host} is not a name of the sweep drill")


def register(registry: Registry, ctx: JobContext) -> None:
    """Resolve the drill's names in this process's probes (a ``job_parts`` function)."""
    ctx.services.resolver = DrillResolver()
