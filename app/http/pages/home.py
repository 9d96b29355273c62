"""``/``: what mcp-sonde is, and the free check form.

``POST /`` (the form, ``url=…``) runs one free-pool check exactly as ``POST /v1/mcp/check``
with ``X-Free-Pool: 1`` does (:func:`app.checking.flow.run_check` with ``free=True``),
under the same client rate limit and client key (:func:`app.http.budget.budgeted`), and
renders the result. A refusal (a URL the target guard refuses, the rate limit, an empty pool,
a busy target) is the page again with the message and its reason key, at the status the API
answers it with.

Cross-site requests (CSRF): the form holds no session, cookie or account; the one thing a
submission spends is the submitting client's free-pool share. The API guards that share from
other sites' pages by their ``Origin`` (:mod:`app.http.middleware.cors`), and so does the form: a
browser sends ``Origin`` with every POST (Fetch standard, "append a request `Origin`
header"), and one that is not this service's origin or a configured free-pool origin is
refused with ``403 free_pool_origin_refused`` before any draw. A token would add nothing: the
answer is readable only by the page that posted it, which is the visitor's own.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from app.checking.errors import ApiError
from app.checking.flow import run_check
from app.checking.services import Services
from app.http.budget import budgeted
from app.http.middleware.cors import origin_may_draw
from app.http.pages.explain import explain_refusal
from app.http.pages.form import read_url
from app.http.pages.render import page
from app.http.pages.views import result_view
from app.http.routes.ops import services_of
from app.settings import Settings

#: The longest URL the form field takes (the target guard refuses longer ones anyway).
URL_MAX = 2048


def _context(settings: Settings, asked: str = "") -> dict[str, Any]:
    return {
        "allow_private": settings.allow_private,
        "asked": asked,
        "result": None,
        "error": None,
        "remaining": None,
        "url_max": URL_MAX,
        "base_url": settings.public_base_url,
    }


async def home(request: Request) -> Response:
    """``GET /``: the page with the empty form."""
    services = services_of(request)
    return page(request, "home.html", _context(services.settings))


async def check(request: Request) -> Response:
    """``POST /``: one free-pool check of the form's URL (see the module docs)."""
    services = services_of(request)
    asked: list[str] = []
    try:
        return await budgeted(request, services, lambda client: _checked(request, services, client, asked))
    except ApiError as exc:
        context = _context(services.settings, asked[0] if asked else "")
        context["error"] = {
            "status": exc.status_code,
            "reason": exc.reason,
            "detail": exc.message,
            "meaning": explain_refusal(exc.reason),
            "retry_after": exc.headers.get("Retry-After"),
        }
        headers = {k: v for k, v in exc.headers.items() if k.lower() not in ("content-type", "payment-required")}
        return page(request, "home.html", context, status=exc.status_code, headers=headers)


async def _checked(request: Request, services: Services, client: str, asked: list[str]) -> Response:
    settings = services.settings
    url = await read_url(request, settings.max_body_bytes, settings.body_timeout_s)
    asked.append(url)
    if not origin_may_draw(request.headers, settings):
        raise ApiError("free_pool_origin_refused", "pages on this origin may not draw on the free pool")
    served = await run_check(services, url, client=client, payment=None, free=True)
    document = json.loads(served.payload)
    context = _context(settings, url)
    context["result"] = result_view(document)
    context["remaining"] = served.pool_remaining
    return page(request, "home.html", context, headers=served.headers())
