"""Error answers as problem details (RFC 9457), and the pages their ``type`` URIs name.

Policy: every error answer of the HTTP API, except a 402 (whose body is the x402
``PaymentRequired`` document, x402 v2 "HTTP transport"), is ``application/problem+json``
with the members of RFC 9457 section 3.1:

- ``type``: ``<public base URL>/problems/<reason>``, a URI that resolves (section 3.1.1) to a
  JSON description of the problem type served by this app (:func:`problem_page`);
- ``title``: the problem type's fixed summary (the same for every occurrence, section 3.1.3);
- ``status``: the HTTP status code (section 3.1.2), repeated for clients that lose it;
- ``detail``: this occurrence, for people (section 3.1.4); never parse it;

and one extension member (section 3.2), ``reason``: the stable machine-readable key clients
branch on, the last path segment of ``type``. The MCP tool's refusals carry the same object.
"""

from __future__ import annotations

from typing import Any, Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Scope

from app.checking.errors import API_REASONS, ApiError, shared_state_unavailable
from app.guard.url import REFUSAL_REASONS

MEDIA_TYPE: Final = "application/problem+json"
PATH: Final = "/problems/"


def title_of(reason: str) -> str:
    """The fixed summary of a reason's problem type."""
    if reason in API_REASONS:
        return API_REASONS[reason][1]
    return REFUSAL_REASONS.get(reason, "The request failed.")


def status_of(reason: str) -> int:
    """The HTTP status a reason is answered with (422 for the target guard's reasons)."""
    return API_REASONS.get(reason, (422, ""))[0]


def type_of(reason: str, base_url: str) -> str:
    """A problem type's URI: its page on this service."""
    return f"{base_url}{PATH}{reason}"


def problem(reason: str, detail: str, status: int, base_url: str) -> dict[str, Any]:
    """The problem details object of one error."""
    return {
        "type": type_of(reason, base_url),
        "title": title_of(reason),
        "status": status,
        "detail": detail,
        "reason": reason,
    }


def base_url_of(scope: Scope) -> str:
    """The public base URL of the app serving ``scope`` (empty, so ``type`` is a relative
    reference, when the scope carries no app of ours)."""
    app = scope.get("app")
    services = getattr(getattr(app, "state", None), "services", None)
    settings = getattr(services, "settings", None)
    return str(settings.public_base_url) if settings is not None else ""


class ProblemResponse(JSONResponse):
    """An ``application/problem+json`` answer (rendered as :class:`JSONResponse` renders)."""

    media_type = MEDIA_TYPE


def problem_response(
    scope: Scope, reason: str, detail: str, status: int, headers: dict[str, str] | None = None
) -> Response:
    """The problem details answer of one error."""
    return ProblemResponse(problem(reason, detail, status, base_url_of(scope)), status, headers=headers)


async def handle_api_error(request: Request, exc: Exception) -> Response:
    """Starlette exception handler for :class:`ApiError`: the x402 document for a 402, else problem
    details (a payment refusal that is not a 402 keeps its ``PAYMENT-REQUIRED`` header)."""
    assert isinstance(exc, ApiError)
    if exc.body is not None and exc.status_code == 402:
        return JSONResponse(exc.body, status_code=exc.status_code, headers=exc.headers)
    return problem_response(request.scope, exc.reason, exc.message, exc.status_code, exc.headers)


async def handle_store_error(request: Request, exc: Exception) -> Response:
    """Starlette exception handler for :class:`~app.store.StoreError` (503 ``shared_state_unavailable``)."""
    refusal = shared_state_unavailable()
    refusal.headers |= {"Cache-Control": "no-store"}
    return await handle_api_error(request, refusal)


def known(reason: str) -> bool:
    """Whether ``reason`` is a problem type this API answers with."""
    return reason in API_REASONS or reason in REFUSAL_REASONS


async def problem_page(request: Request) -> Response:
    """``GET /problems/{reason}``: what a problem type means (the target of every ``type`` URI)."""
    reason = request.path_params["reason"]
    if not known(reason):
        return problem_response(request.scope, "not_found", "no such problem type", 404)
    body = {
        "type": type_of(reason, base_url_of(request.scope)),
        "reason": reason,
        "title": title_of(reason),
        "status": status_of(reason),
        "body": "x402 PaymentRequired document" if reason in _PAYMENT else MEDIA_TYPE,
    }
    return JSONResponse(body, headers={"Cache-Control": "public, max-age=86400"})


#: Reasons answered with 402 and the x402 document instead of a problem details object.
_PAYMENT: Final = frozenset(reason for reason, (status, _meaning) in API_REASONS.items() if status == 402)
