"""The HTTP routes: the check, operations endpoints and the contract."""

from __future__ import annotations

import json
from collections.abc import Mapping

import yaml
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from app.checks.catalogue import catalogue
from app.payment import payment_required
from app.service.body import read_check_request
from app.service.checkflow import run_check
from app.service.clientip import client_ip, rate_key
from app.service.errors import ApiError
from app.service.metrics import bearer_matches
from app.service.services import Services


def services_of(request: Request) -> Services:
    """The app's :class:`Services`."""
    services: Services = request.app.state.services
    return services


async def check(request: Request) -> Response:
    """``POST /v1/mcp/check``: one live check, paid or drawn from the free pool.

    Order: client rate limit, body, then :func:`app.service.checkflow.run_check` (target
    guard, payment, probe, settlement).
    """
    services = services_of(request)
    client = rate_key(client_ip(request, services.trusted_proxies))
    decision = await services.admit(client)
    try:
        response = await _checked(request, services, client)
    except ApiError as exc:
        exc.headers = decision.headers() | exc.headers | NO_STORE  # every answer shows the client's budget
        raise
    response.headers.update(decision.headers() | NO_STORE)
    return response


#: A check's answer is one live observation (and may be a paid one): no cache keeps or replays it.
NO_STORE = {"Cache-Control": "no-store"}


async def _checked(request: Request, services: Services, client: str) -> Response:
    settings = services.settings
    body = await read_check_request(request, settings.max_body_bytes, settings.body_timeout_s)
    served = await run_check(
        services,
        body.url,
        client=client,
        payment=request.headers.get("payment-signature"),
        free=asks_free_pool(request.headers, settings.free_pool_header),
        credentials=body.credentials(),
        include_tools=body.include_tools,
    )
    return Response(served.payload, media_type="application/json", headers=served.headers())


def asks_free_pool(headers: Mapping[str, str], name: str) -> bool:
    """The request asks for a free-pool draw: header ``name`` is ``1``."""
    return headers.get(name, "").strip() == "1"


async def check_catalogue(request: Request) -> Response:
    """``GET /v1/checks``: the check catalogue (every check, its states and reason keys) and its digest."""
    document = catalogue()
    body = {"id": document.suite_id, "catalogue_sha256": document.sha256, "catalogue": document.document}
    return JSONResponse(body, headers={"Cache-Control": "public, max-age=3600"})


async def healthz(request: Request) -> Response:
    """``GET /healthz``: the process answers."""
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> Response:
    """``GET /readyz``: ready to serve; says whether shared storage is up (``degraded`` when not)."""
    services = services_of(request)
    store_ok = await services.store.ping()
    limits_ok = await services.client_limiter.healthy()
    paid = services.payments.enabled
    facilitator_ok = await services.payments.facilitator.healthy() if paid else False
    shared = services.settings.redis_url is not None
    degraded = (shared and not (store_ok and limits_ok)) or (paid and not facilitator_ok)
    body = {
        "status": "degraded" if degraded else "ready",
        "store": {"backend": "redis" if shared else "memory", "ok": store_ok},
        "rate_limits": {"shared": shared, "ok": limits_ok},
        "payments": {"enabled": paid, "facilitator_ok": facilitator_ok},
    }
    return JSONResponse(body)


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
    document = services_of(request).openapi
    return Response(yaml.safe_dump(document, sort_keys=False), media_type="application/yaml")


async def openapi_json(request: Request) -> Response:
    """``GET /openapi.json``: the same document as JSON."""
    return Response(json.dumps(services_of(request).openapi), media_type="application/json")


async def well_known_x402(request: Request) -> Response:
    """``GET /.well-known/x402``: the paid resources of this service and how to pay for them."""
    services = services_of(request)
    document = payment_required(services.settings, "payment_required")
    resource = document.model_dump(mode="json", by_alias=True, exclude_none=True)
    resource.pop("error", None)
    resource["method"] = "POST"
    return JSONResponse({"x402Version": 2, "resources": [resource] if services.payments.enabled else []})
