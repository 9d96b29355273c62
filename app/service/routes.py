"""The HTTP routes: the check, operations endpoints and the contract."""

from __future__ import annotations

import json

import yaml
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from app.errors import TargetRefused
from app.guard import ResolutionFailed, ResolvedTarget, ResolverBusy, check_url, resolve_target
from app.payment import Payment, PaymentGate, payment_required
from app.probe import ProbeFailed, ProbeResult, unresolved_result
from app.service.body import read_check_request
from app.service.checks import TargetBusy
from app.service.clientip import client_ip, rate_key
from app.service.errors import ApiError
from app.service.freepool import Draw
from app.service.services import Services


def services_of(request: Request) -> Services:
    """The app's :class:`Services`."""
    services: Services = request.app.state.services
    return services


async def check(request: Request) -> Response:
    """``POST /v1/mcp/check``: one live check, paid or drawn from the free pool.

    Order: client rate limit, body, target guard (422, nothing charged), payment (x402 or a
    free-pool draw), probe, settlement. A draw is given back and a payment's lock released
    whenever the check is not served; a payment is settled only for a served result.
    """
    services = services_of(request)
    client = rate_key(client_ip(request, services.trusted_proxies))
    decision = await services.client_limiter.hit(client)
    if not decision.allowed:
        services.metrics.limits_hit.labels(limit="client_rate").inc()
        raise ApiError("rate_limited", "too many requests from this client", headers=decision.headers())
    try:
        response = await _checked(request, services, client)
    except ApiError as exc:
        exc.headers = decision.headers() | exc.headers  # every answer shows the client's budget
        raise
    response.headers.update(decision.headers())
    return response


async def _checked(request: Request, services: Services, client: str) -> Response:
    settings = services.settings
    body = await read_check_request(request, settings.max_body_bytes, settings.body_timeout_s)
    try:
        target = check_url(body.url, allow_private=settings.allow_private)
        resolved: ResolvedTarget | ResolutionFailed = await resolve_target(
            target, resolver=services.resolver, allow_private=settings.allow_private
        )
    except TargetRefused as exc:
        raise ApiError(exc.reason, exc.message, 422) from exc
    except ResolutionFailed as failure:
        resolved = failure  # a normal result with status dns; nothing to connect to
    except ResolverBusy as exc:
        raise ApiError(exc.reason, exc.message, headers={"Retry-After": "2"}) from exc
    paid_with = await services.authorize(request, client)
    served = settled = False
    try:
        if isinstance(paid_with, Payment) and paid_with.stored_result is not None:
            # The same payment again, after a settlement whose outcome was unknown.
            receipt = await services.payments.settle(paid_with, paid_with.stored_result)
            settled = served = True
            headers = PaymentGate.response_header(receipt)
            return Response(paid_with.stored_result, media_type="application/json", headers=headers)
        try:
            if isinstance(resolved, ResolutionFailed):
                result = unresolved_result(target, resolved)
                services.metrics.probes.labels(status=result.status).inc()
            else:
                result = await services.checks.check(resolved)
        except TargetBusy as exc:
            services.metrics.limits_hit.labels(limit="target_busy").inc()
            raise ApiError("target_busy", exc.message, headers={"Retry-After": str(exc.retry_after)}) from exc
        except ProbeFailed as exc:
            raise ApiError("probe_internal_error", exc.message) from exc
        payload = result.model_dump_json().encode()
        if not chargeable(result):
            # Our lookup gave no definitive answer: served, but not charged (a draw is given back).
            return Response(payload, media_type="application/json")
        if isinstance(paid_with, Payment):
            headers = PaymentGate.response_header(await services.payments.settle(paid_with, payload))
            settled = True
        else:
            headers = {"X-Free-Pool-Remaining": str(paid_with.remaining)}
        served = True
        return Response(payload, media_type="application/json", headers=headers)
    finally:
        if isinstance(paid_with, Payment) and not settled:
            await services.payments.release(paid_with)
        elif isinstance(paid_with, Draw) and not served:
            await _give_back(services, paid_with)


def chargeable(result: ProbeResult) -> bool:
    """Whether a served result is charged: not when our own lookup gave no definitive answer."""
    return not (result.status == "dns" and result.reason in ("dns_timeout", "dns_failure"))


async def _give_back(services: Services, draw: Draw) -> None:
    await services.free_pool.give_back(draw)
    services.metrics.pool_draws.labels(outcome="returned").inc()


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
    """``GET /metrics``: Prometheus text format."""
    return Response(services_of(request).metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")


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
