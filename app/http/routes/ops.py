"""The HTTP routes: the check, operations endpoints and the contract."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping

import yaml
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from app.checking.errors import ApiError
from app.checking.flow import run_check
from app.checking.freepool import HEADER as FREE_POOL_HEADER
from app.checking.metrics import bearer_matches
from app.checking.services import Services
from app.http.bodies.check import read_check_request
from app.http.budget import budgeted
from app.http.middleware.cors import origin_may_draw
from app.payment import payment_required
from app.settings import Settings
from app.store import Health, health_of
from app.suite.catalogue import catalogue


def services_of(request: Request) -> Services:
    """The app's :class:`Services`."""
    services: Services = request.app.state.services
    return services


async def check(request: Request) -> Response:
    """``POST /v1/mcp/check``: one live check, paid or drawn from the free pool.

    Order: client rate limit, body, then :func:`app.checking.flow.run_check` (target
    guard, payment, probe, settlement). Every answer, errors and faults of ours included, says
    ``Cache-Control: no-store`` and carries the client's rate-limit headers.
    """
    services = services_of(request)
    return await budgeted(request, services, lambda client: _checked(request, services, client))


async def _checked(request: Request, services: Services, client: str) -> Response:
    settings = services.settings
    body = await read_check_request(
        request, settings.max_body_bytes, settings.body_timeout_s, baseline_max_bytes=settings.baseline_max_bytes
    )
    served = await run_check(
        services,
        body.url,
        client=client,
        payment=request.headers.get("payment-signature"),
        free=asks_free_pool(request.headers, settings),
        credentials=body.credentials(),
        include_tools=body.include_tools,
        baseline=body.baseline,
    )
    return Response(served.payload, media_type="application/json", headers=served.headers())


def asks_free_pool(headers: Mapping[str, str], settings: Settings) -> bool:
    """The request asks for a free-pool draw: the free-pool header is ``1``.

    Raises:
        ApiError: 403 ``free_pool_origin_refused`` when a browser page on an origin that may
            not draw asks (:mod:`app.http.middleware.cors`).
    """
    if headers.get(FREE_POOL_HEADER, "").strip() != "1":
        return False
    if not origin_may_draw(headers, settings):
        raise ApiError("free_pool_origin_refused", "pages on this origin may not draw on the free pool")
    return True


async def check_catalogue(request: Request) -> Response:
    """``GET /v1/checks``: the check catalogue (every check, its states and reason keys) and its digest."""
    document = catalogue()
    body = {"id": document.suite_id, "catalogue_sha256": document.sha256, "catalogue": document.document}
    return JSONResponse(body, headers={"Cache-Control": "public, max-age=3600"})


async def healthz(request: Request) -> Response:
    """``GET /healthz``: the process answers."""
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> Response:
    """``GET /readyz``: ready to serve; says whether shared storage and the history database are
    up, whether a key may sign, and, with paid checks on, whether the facilitator answers and
    supports every payment option (``degraded`` when not)."""
    services = services_of(request)
    health = health_of(services.store)  # (down until it answered twice in a row: app.store.health)
    store_ok = await services.store.ping() and (health is None or health.up)
    limits_ok = await services.client_limiter.healthy()
    paid = services.payments.enabled
    support = await services.payments.support.status() if paid else None
    shared = services.settings.redis_url is not None
    history = await services.recorder.state()
    signing = services.attestor.state()
    degraded = (
        (shared and not (store_ok and limits_ok))
        or (support is not None and not support.ok)
        or not history["ok"]
        or not signing["ok"]
    )
    body = {
        "status": "degraded" if degraded else "ready",
        "store": {"backend": "redis" if shared else "memory", "ok": store_ok} | _shared_state(health),
        "rate_limits": {"shared": shared, "ok": limits_ok},
        "history": history,
        "signing": signing,
        "payments": {
            "enabled": paid,
            "facilitator_ok": support is not None and support.answered,
            "supported": support.report() if support is not None else None,
        },
    }
    return JSONResponse(body)


def _shared_state(health: Health | None) -> dict[str, object]:
    """Whether this instance found Redis down, since when, and how many instances it counts."""
    if health is None:
        return {}
    down = None if health.down_since is None else round(time.monotonic() - health.down_since, 1)
    return {"down_for_s": down, "instances": health.instances}


async def metrics(request: Request) -> Response:
    """``GET /metrics``: Prometheus text format; with ``metrics_token`` set, only for its bearer (else 401)."""
    services = services_of(request)
    token = services.settings.metrics_token
    if token is not None and not bearer_matches(request.headers.get("authorization"), token.get_secret_value()):
        challenge = {"WWW-Authenticate": 'Bearer realm="metrics"', "Cache-Control": "no-store"}
        message = "/metrics needs Authorization: Bearer <metrics token>"
        raise ApiError("metrics_unauthorized", message, headers=challenge)
    return Response(services.metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")


async def openapi_yaml(request: Request) -> Response:
    """``GET /openapi.yaml``: the contract, with live settings."""
    document = request.app.state.openapi
    return Response(yaml.safe_dump(document, sort_keys=False), media_type="application/yaml")


async def openapi_json(request: Request) -> Response:
    """``GET /openapi.json``: the same document as JSON."""
    return Response(json.dumps(request.app.state.openapi), media_type="application/json")


async def well_known_x402(request: Request) -> Response:
    """``GET /.well-known/x402``: the paid resources of this service and how to pay for them."""
    services = services_of(request)
    document = payment_required(services.settings, "payment_required")
    resource = document.model_dump(mode="json", by_alias=True, exclude_none=True)
    resource.pop("error", None)
    resource["method"] = "POST"
    return JSONResponse({"x402Version": 2, "resources": [resource] if services.payments.enabled else []})


def sweep_routes() -> list[Route]:
    """The opt-out admin routes (:mod:`app.http.routes.optout`); the page our probes' User-Agent
    names is a web page (:mod:`app.http.pages.probe`)."""
    from app.http.routes import optout

    return [
        Route("/v1/admin/optout", optout.list_optouts, methods=["GET"]),
        Route("/v1/admin/optout", optout.add_optout, methods=["POST"]),
        Route("/v1/admin/optout", optout.remove_optout, methods=["DELETE"]),
    ]
