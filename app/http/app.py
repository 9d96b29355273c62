"""The Starlette application: :func:`create_app`."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import anyio.to_thread
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp

from app.checking.errors import ApiError
from app.checking.services import Services, build_services
from app.db.engine import database_url, safe_url
from app.db.migrate import SchemaOutdated, ensure_current
from app.directory.rows import MIGRATION_STEPS
from app.errors import SondeError
from app.guard import Resolver
from app.http import pages as web
from app.http.badges import route as badge
from app.http.badges.hits import BadgeHits
from app.http.edge import LayeredApp, MetricsPort
from app.http.mcp.tool import build_mcp_server, mcp_route
from app.http.middleware.accesslog import AccessLog, AccessLogger
from app.http.middleware.cors import Cors
from app.http.middleware.requestid import RequestIds
from app.http.openapi import load_document
from app.http.problems import handle_api_error, handle_store_error, problem_page, problem_response
from app.http.routes import attestations, baseline, changes, claims, diff, directory, monitors, servers, stats
from app.http.routes import ops as routes
from app.logs import flush_all
from app.net.dial import Dialler
from app.payment.supported import FacilitatorUnsupported
from app.settings import Settings, get_settings
from app.store import StoreError

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

logger = logging.getLogger("mcp_sonde.service")


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    reason = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
    return problem_response(request.scope, reason, str(exc.detail), exc.status_code, dict(exc.headers or {}))


async def _unexpected(request: Request, exc: Exception) -> Response:
    logger.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return problem_response(request.scope, "internal_error", "mcp-sonde failed; nothing was charged", 500)


def _handlers() -> dict[Any, Any]:
    """The exception handlers of every app of the service (the main one and the metrics port's)."""
    return {
        ApiError: handle_api_error,
        StoreError: handle_store_error,
        HTTPException: _http_error,
        Exception: _unexpected,
    }


async def history_at_start(settings: Settings) -> None:
    """The history database's schema must be current (the embedded SQLite file is made current
    by itself); a database that does not answer does not stop the start: runs wait for it.

    Raises:
        SchemaOutdated: the database is behind (``mcp-sonde db upgrade``).
    """
    url = database_url(settings)
    try:
        await ensure_current(url, embedded=settings.database_url is None, steps=MIGRATION_STEPS)
    except SchemaOutdated:
        raise
    except Exception as exc:  # any driver or network fault: the database does not answer now
        logger.warning(
            "the history database %s does not answer (%s): runs wait for it", safe_url(url), type(exc).__name__
        )


async def embedded_jobs(services: Services) -> None:
    """Scheduled work in this process (:mod:`app.jobs.embedded`) until cancelled; the engine is
    imported on a thread, so the service answers meanwhile."""
    module = await anyio.to_thread.run_sync(importlib.import_module, "app.jobs.embedded")
    jobs = module.Embedded(services)
    await jobs.start()
    try:
        await asyncio.Event().wait()
    finally:
        await asyncio.shield(jobs.stop())


def create_app(
    settings: Settings | None = None,
    *,
    resolver: Resolver | None = None,
    network_backend: Dialler | None = None,
    tracer_provider: TracerProvider | None = None,
) -> Starlette:
    """Build the service.

    Args:
        settings: defaults to :func:`app.settings.get_settings`.
        resolver: for the target guard and probes (default: the system resolver).
        network_backend: the socket backend for probes (tests pass a loopback one).
        tracer_provider: with ``otel_enabled``, the OpenTelemetry tracer provider to use
            (default: one built from the ``OTEL_*`` environment; see :mod:`app.checking.tracing`).
    """
    settings = settings or get_settings()
    openapi = load_document(settings)  # (a missing document fails the start before anything is built)
    services = build_services(
        settings, resolver=resolver, network_backend=network_backend, tracer_provider=tracer_provider
    )
    badges = badge.BadgeService(services)
    mcp_server = build_mcp_server(services)
    mcp_endpoint, _sdk_app = mcp_route(mcp_server, settings.body_timeout_s)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if settings.allow_private:
            logger.warning("allow_private is ON: checks may reach private addresses (development only)")
        try:
            await history_at_start(settings)
        except SchemaOutdated as exc:
            logger.error("start-up failed: %s: %s", exc.reason, exc.message)
            await badges.aclose()
            await services.aclose()
            raise
        services.rechecker.start()  # (verified claims' documents, read again daily)
        services.claimed.verified_at("")  # (the claimed hosts badges show: read now, in the background)
        services.pruner.start()  # (runs past their retention: a prune now and then, never in a check's way)
        services.start()  # (this instance's heartbeat in the shared store, if there is one)
        services.recorder.start()  # (runs kept in outboxes, this process's or a gone one's, written now)
        if services.payments.enabled:
            try:
                # A facilitator that answers without every payment option fails the start
                # (app.payment.supported); `mcp-sonde serve` then exits 22 (start-up failed).
                await services.payments.support.at_start()
            except FacilitatorUnsupported as exc:
                logger.error("paid checks cannot start (%s): %s", exc.reason, exc.message)
                await badges.aclose()
                await services.aclose()
                raise
        jobs: asyncio.Task[Any] | None = None
        try:
            services.tracing.start()  # (otel_unavailable: the start fails, with one clear line)
            if settings.embedded_jobs and not settings.redis_url:
                jobs = asyncio.create_task(embedded_jobs(services))  # (never in the start's way)
            async with mcp_server.session_manager.run():
                yield
        except SondeError as exc:
            logger.error("start-up failed: %s: %s", exc.reason, exc.message)
            raise
        finally:
            if jobs is not None:
                jobs.cancel()
                try:
                    await jobs
                except asyncio.CancelledError:
                    pass
                except Exception as exc:  # (the embedded jobs failed; the service served on)
                    logger.error("scheduled work in this process failed: %s", type(exc).__name__)
            services.tracing.shutdown()
            await badges.aclose()
            await services.aclose()
            flush_all()  # access lines still buffered (uvicorn's SIGTERM exit skips atexit)

    table = [
        # Badges first: README views make them the most frequent requests by far.
        Route("/badge/mcp", badge.badge_svg),
        Route("/badge/mcp.png", badge.badge_png),
        Route("/badge/mcp.json", badge.badge_json),
        Route("/badge/mcp/uptime", servers.uptime_badge),
        Route("/v1/mcp/check", routes.check, methods=["POST"]),
        Route("/v1/mcp/diff", diff.diff, methods=["POST"]),
        Route("/v1/checks", routes.check_catalogue),
        mcp_endpoint,
        Route("/healthz", routes.healthz),
        Route("/readyz", routes.readyz),
        *([Route("/metrics", routes.metrics)] if settings.metrics_port is None else []),  # else on its own port
        Route("/openapi.yaml", routes.openapi_yaml),
        Route("/openapi.json", routes.openapi_json),
        Route("/.well-known/x402", routes.well_known_x402),
        Route("/.well-known/mcp-sonde-keys.json", attestations.keys_document),
        Route("/v1/attestations/{id}", attestations.attestation),
        Route("/v1/servers", directory.list_servers),
        Route("/v1/stats", stats.stats),
        Route("/v1/servers/{server_id}", servers.server),
        Route("/v1/servers/{server_id}/history", servers.server_history),
        Route("/v1/servers/{server_id}/changes", changes.server_changes),
        Route("/v1/servers/{server_id}/baseline", baseline.baseline, methods=["GET"]),
        Route("/v1/servers/{server_id}/baseline", baseline.approve_baseline, methods=["PUT"]),
        Route("/v1/claims", claims.open_claim, methods=["POST"]),
        Route("/v1/claims/{claim_id}/verify", claims.verify, methods=["POST"]),
        Route("/v1/owner", claims.owner, methods=["GET"]),
        Route("/v1/owner/sweeps", claims.set_sweeps, methods=["PUT"]),
        Route("/v1/owner/servers/{server_id}/profile", claims.set_profile, methods=["PUT"]),
        Route("/v1/owner/servers/{server_id}/baseline", claims.approve_baseline, methods=["PUT"]),
        Route("/v1/owner/servers/{server_id}/baseline", claims.clear_baseline, methods=["DELETE"]),
        Route("/v1/owner/servers/{server_id}/credentialed-checks", claims.credentialed_checks, methods=["GET"]),
        Route("/v1/monitors", monitors.create_monitor, methods=["POST"]),
        Route("/v1/monitors/{monitor_id}", monitors.monitor, methods=["GET"]),
        Route("/v1/monitors/{monitor_id}", monitors.delete_monitor, methods=["DELETE"]),
        Route("/v1/monitors/{monitor_id}/deliveries", monitors.deliveries),
        Route("/schemas/{name}", attestations.schema),
        Route("/problems/{reason}", problem_page),
        *routes.sweep_routes(),
        *web.routes(),  # the HTML pages (app.http.pages): not API, so not in openapi.yaml
    ]
    paths = frozenset(route.path for route in table)
    access = AccessLogger(
        paths, services.metrics, plain=settings.log_format == "plain", trusted_proxies=services.trusted_proxies
    )
    app = LayeredApp(
        outer=lambda stack: _edge(stack, services, badges, access),
        routes=table,
        middleware=[
            Middleware(AccessLog, access=access),
            Middleware(Cors, settings=settings),
        ],
        exception_handlers=_handlers(),
        lifespan=lifespan,
    )
    app.router.redirect_slashes = False  # a redirect would echo the client's Host header; answer 404
    app.state.services = services
    app.state.openapi = openapi
    app.state.badges = badges
    return app


def _edge(stack: ASGIApp, services: Services, badges: badge.BadgeService, access: AccessLogger) -> ASGIApp:
    """The layers outside Starlette's error middleware (see :mod:`app.http.edge`)."""
    port = services.settings.metrics_port
    if port is not None:
        metrics_app = Starlette(
            routes=[Route("/metrics", routes.metrics)],
            exception_handlers=_handlers(),
        )
        metrics_app.state.services = services
        stack = MetricsPort(stack, metrics_app, port)
    ids = RequestIds(stack, services.trusted_proxies)
    return BadgeHits(ids, badges, access, services.trusted_proxies, port)
