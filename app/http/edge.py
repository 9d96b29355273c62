"""The app's outermost layers, outside Starlette's own error middleware.

- :class:`app.http.badges.hits.BadgeHits`: outside everything, so a cached badge (the service's
  most frequent answer by far) passes through no other layer; it gives its answer the request
  id itself and hands that id to the next layer when the stack answers instead.
- :class:`app.http.middleware.requestid.RequestIds`: outside the rest, so every answer (``/mcp``'s,
  a 500's) carries ``X-Request-Id`` and every log line written for it the same id.
- :class:`MetricsPort`: with the setting ``metrics_port``, ``mcp-sonde serve`` listens on that
  port too, and a request that arrived on it (the local socket's port, ``scope["server"]``,
  which no header can change) goes to an app that has ``/metrics`` and nothing else; the main
  app then has no ``/metrics`` route at all (404).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette
from starlette.types import ASGIApp, Receive, Scope, Send


def arrived_on(scope: Scope, port: int | None) -> bool:
    """Whether an HTTP request came in on local port ``port`` (``scope["server"]``, which no header changes)."""
    server = scope.get("server")
    return port is not None and server is not None and server[1] == port


class MetricsPort:
    """ASGI: requests to the metrics port go to ``metrics``, the others to ``app`` (see the module docs)."""

    def __init__(self, app: ASGIApp, metrics: ASGIApp, port: int) -> None:
        self.app = app
        self.metrics = metrics
        self.port = port

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and arrived_on(scope, self.port):
            await self.metrics(scope, receive, send)
        else:
            await self.app(scope, receive, send)


class LayeredApp(Starlette):
    """A :class:`Starlette` app whose whole stack, error middleware included, is wrapped by ``outer``."""

    def __init__(self, *args: Any, outer: Callable[[ASGIApp], ASGIApp], **kwargs: Any) -> None:
        self._outer = outer
        super().__init__(*args, **kwargs)

    def build_middleware_stack(self) -> ASGIApp:
        """Starlette's stack inside ``outer``."""
        return self._outer(super().build_middleware_stack())
