"""``GET/POST/DELETE /v1/admin/optout``: the opt-out list (:mod:`app.optout`), for its operator.

Policy: the routes need ``Authorization: Bearer <admin_token>`` (RFC 6750 section 2.1), the
token compared in constant time (:func:`app.checking.metrics.bearer_matches`). Without the
setting they answer 403 ``admin_disabled``; without a bearer token 401 ``admin_unauthorized``
(with ``WWW-Authenticate: Bearer realm="admin"``, RFC 6750 section 3); with another token 403
``admin_forbidden``. Every answer says ``Cache-Control: no-store``. ``POST`` takes
``{"item": "<host or URL>"}`` (201 when added, 200 when already listed); ``DELETE`` takes the
item as the query parameter ``item`` (404 ``optout_not_found`` when it was not listed).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from app import jsonsafe
from app.checking.errors import ApiError
from app.checking.metrics import bearer_matches
from app.checking.services import Services
from app.http.bodies.check import is_json, read_body
from app.optout import OptOut, OptOutInvalid

NO_STORE = {"Cache-Control": "no-store"}
MAX_BODY = 4096


def _services(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


def _authorised(request: Request) -> Services:
    services = _services(request)
    token = services.settings.admin_token
    if token is None:
        raise ApiError("admin_disabled", "the admin endpoints are off (no admin token is set)", headers=NO_STORE)
    authorization = request.headers.get("authorization")
    if authorization is None or not authorization.strip().lower().startswith("bearer "):
        challenge = {"WWW-Authenticate": 'Bearer realm="admin"', **NO_STORE}
        raise ApiError("admin_unauthorized", "send Authorization: Bearer <admin token>", headers=challenge)
    if not bearer_matches(authorization, token.get_secret_value()):
        raise ApiError("admin_forbidden", "the bearer token is not the admin token", headers=NO_STORE)
    return services


def _view(item: OptOut) -> dict[str, Any]:
    return {"kind": item.kind, "value": item.value, "added_at": item.added_at.strftime("%Y-%m-%dT%H:%M:%SZ")}


def _invalid(exc: OptOutInvalid) -> ApiError:
    return ApiError("optout_invalid", exc.message, headers=NO_STORE)


async def list_optouts(request: Request) -> Response:
    """``GET /v1/admin/optout``: every item, oldest first."""
    services = _authorised(request)
    items = await services.optouts.items()
    return JSONResponse({"items": [_view(item) for item in items]}, headers=NO_STORE)


async def add_optout(request: Request) -> Response:
    """``POST /v1/admin/optout``: add ``{"item": ...}``."""
    services = _authorised(request)
    if not is_json(request.headers.get("content-type", "")):
        raise ApiError("unsupported_media_type", "the Content-Type must be application/json", headers=NO_STORE)
    raw = await read_body(request, MAX_BODY, services.settings.body_timeout_s)
    try:
        payload = jsonsafe.loads(raw, object_pairs_hook=jsonsafe.unique_keys)
    except ValueError:
        raise ApiError("invalid_json", "the body is not valid JSON", headers=NO_STORE) from None
    if not isinstance(payload, dict) or set(payload) != {"item"} or not isinstance(payload["item"], str):
        raise ApiError("invalid_body", 'the body is {"item": "<host or URL>"}', headers=NO_STORE)
    try:
        item, new = await services.optouts.add(payload["item"])
    except OptOutInvalid as exc:
        raise _invalid(exc) from None
    return JSONResponse({**_view(item), "added": new}, status_code=201 if new else 200, headers=NO_STORE)


async def remove_optout(request: Request) -> Response:
    """``DELETE /v1/admin/optout?item=...``: take an item off the list."""
    services = _authorised(request)
    item = request.query_params.get("item")
    if item is None or set(request.query_params) != {"item"}:
        raise ApiError("invalid_query", "give the item to remove as ?item=<host or URL>", headers=NO_STORE)
    try:
        removed = await services.optouts.remove(item)
    except OptOutInvalid as exc:
        raise _invalid(exc) from None
    if not removed:
        raise ApiError("optout_not_found", "the item is not on the opt-out list", headers=NO_STORE)
    return JSONResponse({"removed": True}, headers=NO_STORE)
